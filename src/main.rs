use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = stallscope::cli::Cli::from_env();
    match stallscope::commands::run(cli) {
        Ok(_) if stallscope::commands::output_failed() => ExitCode::FAILURE,
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // A message can quote a file's cell or a kernel name: shown escaped.
            let message = format!("{e:#}");
            eprintln!(
                "Error: {}",
                stallscope::report::format::printable_lines(&message)
            );
            ExitCode::FAILURE
        }
    }
}
