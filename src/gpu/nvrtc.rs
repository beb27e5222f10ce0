//! Run-time compilation with NVRTC: the CUDA include path is discovered, errors carry the
//! compiler's log and the file name, and compiled modules are cached on disk keyed by
//! the source, the options (architecture included) and the NVRTC version.

use anyhow::{Context, Result, anyhow, bail};
use cudarc::nvrtc::sys;
use sha2::{Digest, Sha256};
use std::ffi::{CStr, CString, c_char};
use std::path::PathBuf;

/// A compiled kernel module.
pub struct Compiled {
    pub cubin: Vec<u8>,
    /// What ptxas said (registers, spills), when the module was compiled now.
    pub log: String,
    pub cached: bool,
}

pub struct Compiler {
    arch: String,
    include: Option<PathBuf>,
    cache: Option<PathBuf>,
    version: (i32, i32),
}

impl Compiler {
    /// NVRTC for one target architecture (`sm_90a`, `sm_80` …).
    pub fn new(arch: &str) -> Result<Compiler> {
        if !nvrtc_present() {
            bail!(
                "NVRTC (libnvrtc.so) was not found: install the CUDA toolkit or put its lib64 folder on LD_LIBRARY_PATH"
            );
        }
        let mut version = (0, 0);
        unsafe { sys::nvrtcVersion(&mut version.0, &mut version.1) }
            .result()
            .map_err(|e| anyhow!("nvrtcVersion failed: {e:?}"))?;
        Ok(Compiler {
            arch: arch.to_string(),
            include: cuda_include_dir(),
            cache: crate::files::cache::dir().map(|c| c.join("cubin")),
            version,
        })
    }

    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// Compiles `source` (named `file` in errors) to a cubin for this architecture.
    pub fn compile(&self, file: &str, source: &str, extra: &[String]) -> Result<Compiled> {
        let mut options = vec![
            format!("--gpu-architecture={}", self.arch),
            "-std=c++17".to_string(),
            "-lineinfo".to_string(),
            "--ptxas-options=-v".to_string(),
        ];
        if let Some(inc) = &self.include {
            options.push(format!("--include-path={}", inc.display()));
        }
        options.extend(extra.iter().cloned());

        let key = {
            let mut h = Sha256::new();
            h.update(source.as_bytes());
            for (name, text) in HEADERS {
                h.update([0u8]);
                h.update(name.as_bytes());
                h.update(text.as_bytes());
            }
            for o in &options {
                h.update([0u8]);
                h.update(o.as_bytes());
            }
            h.update(format!("nvrtc {}.{}", self.version.0, self.version.1).as_bytes());
            h.finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let cached_path = self.cache.as_ref().map(|c| c.join(format!("{key}.cubin")));
        if let Some(p) = &cached_path
            && let Ok(cubin) = std::fs::read(p)
        {
            return Ok(Compiled {
                cubin,
                log: std::fs::read_to_string(p.with_extension("log")).unwrap_or_default(),
                cached: true,
            });
        }

        let (cubin, log) = compile_raw(file, source, &options).map_err(|e| {
            if self.include.is_none() && e.to_string().contains("cannot open source file") {
                e.context("the CUDA headers were not found: set CUDA_HOME or CUDA_PATH")
            } else {
                e
            }
        })?;
        if let Some(p) = &cached_path
            && let Some(dir) = p.parent()
            && std::fs::create_dir_all(dir).is_ok()
        {
            // A cache that cannot be written only costs a recompilation next time.
            let _ = crate::files::write::atomically(&p.with_extension("log"), log.as_bytes());
            let _ = crate::files::write::atomically(p, &cubin);
        }
        Ok(Compiled {
            cubin,
            log,
            cached: false,
        })
    }
}

/// NVRTC's version, where it is present.
pub fn version() -> Option<(i32, i32)> {
    if !nvrtc_present() {
        return None;
    }
    let mut v = (0, 0);
    unsafe { sys::nvrtcVersion(&mut v.0, &mut v.1) }
        .result()
        .ok()?;
    Some(v)
}

pub fn nvrtc_present() -> bool {
    unsafe { sys::is_culib_present() }
}

/// The headers every kernel may include by name, whatever folder its source is in:
/// the pipeline markers of `stallscope trace` (`kernels/stallscope_trace.h`).
pub const HEADERS: &[(&str, &str)] = &[(
    "stallscope_trace.h",
    include_str!("../../kernels/stallscope_trace.h"),
)];

fn compile_raw(file: &str, source: &str, options: &[String]) -> Result<(Vec<u8>, String)> {
    let src = CString::new(source).context("the source holds a NUL byte")?;
    let name = CString::new(file).context("the file name holds a NUL byte")?;
    let header_texts: Vec<CString> = HEADERS
        .iter()
        .map(|(_, text)| CString::new(*text).expect("a header holds no NUL"))
        .collect();
    let header_names: Vec<CString> = HEADERS
        .iter()
        .map(|(n, _)| CString::new(*n).expect("a header name holds no NUL"))
        .collect();
    let texts: Vec<*const c_char> = header_texts.iter().map(|h| h.as_ptr()).collect();
    let names: Vec<*const c_char> = header_names.iter().map(|h| h.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    unsafe {
        sys::nvrtcCreateProgram(
            &mut prog,
            src.as_ptr(),
            name.as_ptr(),
            HEADERS.len() as i32,
            texts.as_ptr(),
            names.as_ptr(),
        )
    }
    .result()
    .map_err(|e| anyhow!("{file}: nvrtcCreateProgram failed: {e:?}"))?;
    let guard = ProgramGuard(prog);

    let c_opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()).expect("options hold no NUL"))
        .collect();
    let ptrs: Vec<*const c_char> = c_opts.iter().map(|o| o.as_ptr()).collect();
    let status = unsafe { sys::nvrtcCompileProgram(guard.0, ptrs.len() as i32, ptrs.as_ptr()) };
    let log = program_log(guard.0);
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        let error = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(status)) }.to_string_lossy();
        bail!(
            "{file} does not compile ({error}), options {}:\n{}",
            options.join(" "),
            log.trim_end()
        );
    }
    let mut size = 0usize;
    unsafe { sys::nvrtcGetCUBINSize(guard.0, &mut size) }
        .result()
        .map_err(|e| anyhow!("{file}: no CUBIN (is the architecture a real one?): {e:?}"))?;
    let mut cubin = vec![0u8; size];
    unsafe { sys::nvrtcGetCUBIN(guard.0, cubin.as_mut_ptr() as *mut c_char) }
        .result()
        .map_err(|e| anyhow!("{file}: nvrtcGetCUBIN failed: {e:?}"))?;
    Ok((cubin, log))
}

fn program_log(prog: sys::nvrtcProgram) -> String {
    let mut size = 0usize;
    if unsafe { sys::nvrtcGetProgramLogSize(prog, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS
        || size <= 1
    {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    if unsafe { sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) }
        != sys::nvrtcResult::NVRTC_SUCCESS
    {
        return String::new();
    }
    String::from_utf8_lossy(&buf[..size - 1]).into_owned()
}

struct ProgramGuard(sys::nvrtcProgram);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        unsafe {
            let _ = sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

/// The CUDA include folder: `$CUDA_PATH`, `$CUDA_HOME`, then /usr/local/cuda.
pub fn cuda_include_dir() -> Option<PathBuf> {
    let candidates = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .chain([PathBuf::from("/usr/local/cuda")]);
    candidates
        .map(|root| root.join("include"))
        .find(|inc| inc.join("cuda_fp16.h").is_file())
}

/// ptxas's "Potential Performance Loss" advisories in a log, as (code, what): for Hopper
/// code, wgmmas serialized (C7510–C7520), and its note that it injected a
/// warpgroup.arrive to use registers a wgmma holds (C7519, an "info" line: the warps
/// wait for the wgmmas in flight there). They cost far more than they show — a kernel
/// whose wgmmas are serialized still runs correctly, ~20 % slower (a trace build with
/// injected arrives ran 2.4× its plain build).
pub fn performance_advisories(log: &str) -> Vec<(&str, &'static str)> {
    log.lines()
        .filter(|l| l.contains("Potential Performance Loss") || l.contains("(C7519)"))
        .map(|l| {
            let code = l
                .split_once('(')
                .and_then(|(_, rest)| rest.split_once(')'))
                .map_or("ptxas", |(code, _)| code);
            let what = if l.contains("serialized") {
                "wgmma serialized"
            } else if l.contains("warpgroup.arrive") {
                "warpgroup.arrive injected (waits for the wgmmas in flight)"
            } else {
                "performance loss"
            };
            (code, what)
        })
        .collect()
}

/// Registers, spills and performance advisories from a ptxas log, for the run table.
pub fn resource_summary(log: &str) -> Option<String> {
    let regs = log
        .lines()
        .find_map(|l| l.split("Used ").nth(1).and_then(|r| r.split(' ').next()))?;
    let spills = log
        .lines()
        .filter(|l| l.contains("bytes spill stores"))
        .find_map(|l| {
            let s = l.split("bytes spill stores").next()?;
            s.rsplit(", ").next().map(str::trim).map(str::to_string)
        });
    let mut summary = match spills {
        Some(s) if s != "0" => format!("{regs} regs, {s} B spilled"),
        _ => format!("{regs} regs"),
    };
    for (code, what) in performance_advisories(log) {
        summary.push_str(&format!(", {what} ({code})"));
    }
    Some(summary)
}

/// [`resource_summary`] of one kernel of a module that may hold several (a version with
/// a path, the trace build's timer kernel): the lines of `entry`'s function properties
/// and the advisories that name it. None where the log names functions but not this
/// one (a misspelt entry is not given another kernel's registers); the whole log's
/// summary where it names none.
pub fn resource_summary_of(log: &str, entry: &str) -> Option<String> {
    let properties = format!("Function properties for {entry}");
    let named = format!("function '{entry}'");
    let mut lines = Vec::new();
    let mut inside = false;
    for l in log.lines() {
        if l.contains(&properties) && l.trim_end().ends_with(entry) {
            inside = true;
        }
        if inside || l.contains(&named) {
            lines.push(l);
        }
        if inside && l.contains("Used ") {
            inside = false;
        }
    }
    if lines.iter().any(|l| l.contains("Used ")) {
        resource_summary(&lines.join("\n"))
    } else if log.contains("Function properties for ") {
        None
    } else {
        resource_summary(log)
    }
}

#[cfg(test)]
mod tests {
    use super::{performance_advisories, resource_summary, resource_summary_of};

    /// A module of two kernels (a version and its path): each one's own registers,
    /// spills and advisories.
    #[test]
    fn ptxas_summary_of_one_kernel_of_several() {
        let log = "ptxas info    : (C7519) warpgroup.arrive is injected in around line 41 by compiler to allow use of registers in GMMA in function 'big'\n\
                   ptxas info    : Compiling entry function 'small' for 'sm_90a'\n\
                   ptxas info    : Function properties for small\n\
                   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : Used 90 registers, used 1 barriers\n\
                   ptxas info    : Compiling entry function 'big' for 'sm_90a'\n\
                   ptxas info    : Function properties for big\n\
                   ptxas         .     24 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n\
                   ptxas info    : Used 168 registers, used 16 barriers\n";
        assert_eq!(resource_summary_of(log, "small").unwrap(), "90 regs");
        assert_eq!(
            resource_summary_of(log, "big").unwrap(),
            "168 regs, 12 B spilled, warpgroup.arrive injected (waits for the wgmmas in flight) (C7519)"
        );
        // A name that is only a prefix of another's is not that one, nor is a name the
        // log does not hold.
        assert_eq!(resource_summary_of(log, "bi"), None);
        assert_eq!(resource_summary_of(log, "smal"), None);
        // A log that names no function: its summary, whatever the name.
        let bare = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 40 registers\n";
        assert_eq!(resource_summary_of(bare, "k").unwrap(), "40 regs");
    }

    /// v31's module as NVRTC 13.0 compiled it for sm_90a: the large kernel and the
    /// small-problem path's, each its own registers and spills.
    #[test]
    fn ptxas_summary_of_each_kernel_of_v31() {
        let log = include_str!("../../tests/fixtures/ptxas/v31-two-kernels.log");
        assert_eq!(
            resource_summary_of(log, "attn_v31").unwrap(),
            "168 regs, 12 B spilled"
        );
        assert_eq!(
            resource_summary_of(log, "attn_v31_small").unwrap(),
            "122 regs"
        );
    }

    #[test]
    fn ptxas_summary() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\nptxas info    : Function properties for k\n    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\nptxas info    : Used 168 registers, used 1 barriers, 400 bytes cmem[0]\n";
        assert_eq!(resource_summary(log).unwrap(), "168 regs, 8 B spilled");
        let log = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 40 registers\n";
        assert_eq!(resource_summary(log).unwrap(), "40 regs");
    }

    /// NVRTC's log of a kernel whose wgmmas ptxas serialized (a branch between a wgmma's
    /// commit and its wait), as NVRTC 13.0 printed it.
    #[test]
    fn ptxas_serialization_advisory() {
        let log = include_str!("../../tests/fixtures/ptxas/wgmma-serialized.log");
        assert_eq!(
            resource_summary(log).unwrap(),
            "168 regs, wgmma serialized (C7518)"
        );
        assert_eq!(performance_advisories(log), [("C7518", "wgmma serialized")]);
        assert!(performance_advisories("ptxas info    : Used 40 registers\n").is_empty());
    }

    /// NVRTC's log of v28's trace build with the mark of 2026-12-07, whose branches
    /// between a wgmma's issue and its wait made ptxas inject warpgroup.arrive (the
    /// trace build ran 2.4× the plain one on an H100).
    #[test]
    fn ptxas_injected_arrive_advisory() {
        let log = include_str!("../../tests/fixtures/ptxas/warpgroup-arrive-injected.log");
        let found = performance_advisories(log);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found
                .iter()
                .all(|&(code, what)| code == "C7519" && what.contains("warpgroup.arrive"))
        );
    }
}
