//! The HTML report in a real browser: headless Chromium opens the bundled flash-attention
//! ladder's page from disk, once to read back its DOM and console, once to take a
//! screenshot. Where Chromium is missing (`apt-get install chromium`), every test here
//! says SKIPPED and passes, counted in the skipped tally at the end of `cargo test`; CI
//! installs it and sets `STALLSCOPE_MUST_RUN=chromium`, so that there they cannot skip.

mod common;

use common::{profiles, skip};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const LADDER: &str = "flash-attention";
const CHARTS: &[&str] = &["speed", "stalls", "signals", "roofline"];

/// What the browser made of the page.
struct Rendered {
    dom: String,
    /// Console messages the page raised (Chromium logs them as `…:CONSOLE…` lines).
    console: Vec<String>,
    screenshot: PathBuf,
    /// The ladder's own versions and its trail as `id label` steps, from the JSON report.
    versions: Vec<String>,
    trail: Vec<String>,
}

fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("STALLSCOPE_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from));
    candidates.into_iter().find(|p| p.is_file())
}

/// Renders the page once for all the tests here; `None` where there is no browser.
fn rendered() -> Option<&'static Rendered> {
    static PAGE: OnceLock<Option<Rendered>> = OnceLock::new();
    PAGE.get_or_init(|| chromium().map(|browser| render(&browser)))
        .as_ref()
}

fn stallscope(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_stallscope"))
        .env_remove("STALLSCOPE_PROFILES")
        .args(args)
        .arg("--profiles")
        .arg(profiles())
        .output()
        .expect("stallscope runs");
    assert!(
        out.status.success(),
        "stallscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn render(browser: &Path) -> Rendered {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join(format!("{LADDER}.html"));
    stallscope(&[
        "report",
        "--ladder",
        LADDER,
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    let json: serde_json::Value = serde_json::from_slice(&stallscope(&[
        "report", "--ladder", LADDER, "--format", "json",
    ]))
    .unwrap();
    let ladder = &json["ladders"][0];
    let versions = ladder["versions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["baseline"] == false)
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    let trail = ladder["trail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["id"].as_str().unwrap(),
                s["label"].as_str().unwrap_or("—")
            )
        })
        .collect();

    let url = format!("file://{}", page.display());
    let dom_run = run_browser(
        browser,
        &dir.join("profile-dom"),
        &["--enable-logging=stderr", "--v=0", "--dump-dom", &url],
    );
    let console = String::from_utf8_lossy(&dom_run.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let screenshot = dir.join(format!("{LADDER}.png"));
    run_browser(
        browser,
        &dir.join("profile-shot"),
        &[
            "--hide-scrollbars",
            "--window-size=1280,1800",
            &format!("--screenshot={}", screenshot.display()),
            &url,
        ],
    );
    Rendered {
        dom: String::from_utf8_lossy(&dom_run.stdout).into_owned(),
        console,
        screenshot,
        versions,
        trail,
    }
}

/// Runs headless Chromium with a fresh profile, isolated from any network service, for
/// at most a minute.
fn run_browser(browser: &Path, profile: &Path, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Read both pipes while waiting, so that a full pipe cannot stall the browser.
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut buf).map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut buf).map(|_| buf)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium {args:?} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: reader.join().unwrap().unwrap_or_default(),
        stderr: err_reader.join().unwrap().unwrap_or_default(),
    }
}

macro_rules! page_or_skip {
    ($test:literal) => {
        match rendered() {
            Some(p) => p,
            None => {
                skip(
                    $test,
                    "chromium",
                    "Chromium is not installed (apt-get install chromium, or set STALLSCOPE_CHROMIUM)",
                );
                return;
            }
        }
    };
}

/// The opening tags inside one chart's `<svg data-chart="NAME">…</svg>`.
fn chart_tags<'a>(dom: &'a str, chart: &str) -> Vec<&'a str> {
    let Some(start) = dom.find(&format!("data-chart=\"{chart}\"")) else {
        return Vec::new();
    };
    let body = &dom[start..];
    let body = &body[..body.find("</svg>").unwrap_or(body.len())];
    body.split('<')
        .filter_map(|t| t.split('>').next())
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    tag[at..].split('"').next()
}

/// The page's text: tags dropped, entities and white space as a reader sees them.
fn text_of(dom: &str) -> String {
    let body = dom.split("<body").nth(1).unwrap_or(dom);
    let mut text = String::with_capacity(body.len());
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_page_loads_without_console_errors() {
    let page = page_or_skip!("html_browser console");
    assert!(
        page.dom.contains("</html>") && page.console.is_empty(),
        "console: {:?}",
        page.console
    );
}

#[test]
fn every_chart_has_one_mark_per_version_and_series() {
    let page = page_or_skip!("html_browser charts");
    let mut problems = Vec::new();
    for chart in CHARTS {
        let tags = chart_tags(&page.dom, chart);
        let marks: Vec<(Option<&str>, &str)> = tags
            .iter()
            .filter(|t| attr(t, "class").is_some_and(|c| c.split(' ').any(|w| w == "mark")))
            .filter_map(|t| Some((attr(t, "data-series"), attr(t, "data-version")?)))
            .collect();
        let mut series: Vec<Option<&str>> = marks.iter().map(|m| m.0).collect();
        series.sort();
        series.dedup();
        for s in series {
            let mut ids: Vec<&str> = marks
                .iter()
                .filter(|m| m.0 == s && page.versions.iter().any(|v| v == m.1))
                .map(|m| m.1)
                .collect();
            ids.sort();
            let mut want: Vec<&str> = page.versions.iter().map(String::as_str).collect();
            want.sort();
            if ids != want {
                problems.push(format!("{chart} {s:?}: marks for {ids:?}"));
            }
        }
        if marks.is_empty() {
            problems.push(format!("{chart}: no marks"));
        }
        // A dash stands where a version has no value: on the speed chart, the versions
        // the bundled runs do not hold (v30 on), no others.
        let mut dashed: Vec<&str> = tags
            .iter()
            .filter(|t| attr(t, "class").is_some_and(|c| c.split(' ').any(|w| w == "none")))
            .filter_map(|t| attr(t, "data-version"))
            .collect();
        dashed.sort();
        let want: &[&str] = if *chart == "speed" {
            &["v30", "v31", "v32", "v33", "v34", "v35"]
        } else {
            &[]
        };
        if dashed != want {
            problems.push(format!("{chart}: dashes for {dashed:?}, not {want:?}"));
        }
    }
    assert!(
        problems.is_empty() && page.versions.len() == 35,
        "{} versions; {problems:#?}",
        page.versions.len()
    );
}

#[test]
fn the_page_text_holds_the_trail_in_order() {
    let page = page_or_skip!("html_browser trail");
    let text = text_of(&page.dom);
    let mut at = 0;
    let missing: Vec<&String> = page
        .trail
        .iter()
        .filter(|step| match text[at..].find(step.as_str()) {
            Some(i) => {
                at += i + step.len();
                false
            }
            None => true,
        })
        .collect();
    assert!(
        !page.trail.is_empty() && missing.is_empty(),
        "steps not found in order: {missing:?}"
    );
}

/// A PNG of the page that is more than a blank window (a blank 1280×1800 PNG is a few
/// kilobytes; this page's charts and tables make hundreds).
#[test]
fn the_screenshot_shows_the_page() {
    let page = page_or_skip!("html_browser screenshot");
    let png = std::fs::read(&page.screenshot).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 100_000,
        "{} bytes at {}",
        png.len(),
        page.screenshot.display()
    );
}

/// The page as the browser reads it holds the roofline section: its two tables' headings
/// and the tally of ncu's estimates, as `report --estimates` words it.
#[test]
fn the_page_text_holds_the_roofline_and_estimates_tables() {
    let page = page_or_skip!("html_browser roofline tables");
    let text = text_of(&page.dom);
    let estimates =
        String::from_utf8(stallscope(&["report", "--ladder", LADDER, "--estimates"])).unwrap();
    let tally = estimates
        .lines()
        .find(|l| l.starts_with("Of "))
        .expect("report --estimates has its tally");
    let wanted = [
        "On the roofline, and what ncu promised",
        "FLOP/B DRAM",
        "nearer roof",
        "What ncu estimated, what each step got",
        "findings resolved (ncu's estimate)",
        tally,
    ];
    let missing: Vec<&&str> = wanted.iter().filter(|w| !text.contains(**w)).collect();
    assert!(missing.is_empty(), "not on the page: {missing:?}");
}
