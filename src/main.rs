use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = stallscope::cli::Cli::parse();
    match stallscope::commands::run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
