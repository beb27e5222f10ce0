//! Small file-system helpers shared by every side of the crate: writes that readers see
//! whole or not at all (with the permissions a file had, or the umask's), reads that
//! stop at a size limit and take regular files only, paths confined to the folders they
//! may name, the lock that read-modify-write of a ladder's files holds, and paths
//! resolved or made relative without touching the disk.

use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

// Limits.

/// The most bytes one file may hold, unless `--max-file-size` says otherwise.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 30;
/// The most a gzip export may inflate to, unless `--max-decompressed` says otherwise: a
/// large raw page of a thousand launches is some tens of MB.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 2 << 30;
/// The environment variables the flags read.
pub const MAX_FILE_SIZE_VAR: &str = "STALLSCOPE_MAX_FILE_SIZE";
pub const MAX_DECOMPRESSED_VAR: &str = "STALLSCOPE_MAX_DECOMPRESSED";

/// [`DEFAULT_MAX_FILE_SIZE`] as `--max-file-size` shows and parses it (`1 GiB`).
pub fn default_max_file_size_text() -> &'static str {
    static TEXT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| size_text(DEFAULT_MAX_FILE_SIZE));
    &TEXT
}

/// [`DEFAULT_MAX_DECOMPRESSED`] as `--max-decompressed` shows and parses it (`2 GiB`).
pub fn default_max_decompressed_text() -> &'static str {
    static TEXT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| size_text(DEFAULT_MAX_DECOMPRESSED));
    &TEXT
}

/// How much stallscope reads of one file, and lets one gzip file inflate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_file_size: u64,
    pub max_decompressed: u64,
}

static MAX_FILE_SIZE: AtomicU64 = AtomicU64::new(0);
static MAX_DECOMPRESSED: AtomicU64 = AtomicU64::new(0);

/// Sets the limits for the rest of the process (the command line's flags).
pub fn set_limits(limits: Limits) {
    MAX_FILE_SIZE.store(limits.max_file_size.max(1), Ordering::Relaxed);
    MAX_DECOMPRESSED.store(limits.max_decompressed.max(1), Ordering::Relaxed);
}

/// The limits in force: those set, else the environment's, else the defaults. A
/// variable that is no size is an error naming it.
pub fn limits() -> Result<Limits> {
    let get = |set: &AtomicU64, var: &str, default: u64| -> Result<u64> {
        match set.load(Ordering::Relaxed) {
            0 => env_size(var).map(|v| v.unwrap_or(default)),
            v => Ok(v),
        }
    };
    Ok(Limits {
        max_file_size: get(&MAX_FILE_SIZE, MAX_FILE_SIZE_VAR, DEFAULT_MAX_FILE_SIZE)?,
        max_decompressed: get(
            &MAX_DECOMPRESSED,
            MAX_DECOMPRESSED_VAR,
            DEFAULT_MAX_DECOMPRESSED,
        )?,
    })
}

fn env_size(var: &str) -> Result<Option<u64>> {
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(text) => parse_size(&text)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("{var}: {e}")),
        Err(std::env::VarError::NotUnicode(_)) => {
            bail!("{var} is not text: give a size such as 8GiB")
        }
    }
}

/// `4096`, `512MiB`, `8GiB`, `2G`, `100MB` …: binary units (K, M, G, T, with or without
/// `iB`), or decimal ones (KB, MB, GB, TB).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a size: give bytes or a size such as 512MiB, 8GiB");
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let number: u64 = t[..digits].parse().map_err(|_| bad())?;
    let factor: u64 = match t[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    match number.checked_mul(factor) {
        Some(0) => Err(format!("{text:?}: the limit must be more than 0 bytes")),
        Some(n) => Ok(n),
        None => Err(bad()),
    }
}

/// A size as the limits' messages give it: `2 GiB`, `512 MiB`, `1000 bytes`.
pub fn size_text(bytes: u64) -> String {
    for (unit, factor) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{} {unit}", bytes / factor);
        }
    }
    format!("{bytes} bytes")
}

/// `PATH: cannot read it: REASON`.
fn io_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("{}: cannot read it: {e}", path.display())
}

fn too_large(path: &Path, limit: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: the file is larger than {} (the per-file limit); if it is what stallscope should read, raise the limit with --max-file-size SIZE (or {MAX_FILE_SIZE_VAR}), e.g. --max-file-size 4GiB",
        path.display(),
        size_text(limit)
    )
}

// Reading.

/// A file that could not be read: missing, or refused (outside its folder, not a
/// regular file, too large), with the reason in one line.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub missing: bool,
    pub message: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FileError {}

impl FileError {
    fn refused(path: &Path, message: impl Into<String>) -> FileError {
        FileError {
            path: path.to_path_buf(),
            missing: false,
            message: message.into(),
        }
    }
}

fn is_device(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_char_device() || meta.file_type().is_block_device()
}

/// What a file is, when it is not a regular file.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if is_device(meta) {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads a regular file whole, up to the per-file limit; anything else (a FIFO, a
/// device, a folder) is refused without waiting on it.
pub fn read_regular(path: &Path) -> Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let limit = limits()?.max_file_size;
    // Non-blocking: opening a FIFO must not wait for a writer before it is refused.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        bail!(
            "{}: this is {}, and stallscope reads regular files only",
            path.display(),
            kind_of(&meta)
        );
    }
    read_up_to(file, path, limit, meta.len())
}

/// Reads a file named on the command line, up to the per-file limit: a regular file or
/// a pipe (`<(zcat x.csv.gz)`), never a device.
pub fn read_given(path: &Path) -> Result<Vec<u8>> {
    let limit = limits()?.max_file_size;
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if meta.is_dir() || is_device(&meta) {
        bail!(
            "{}: this is {}, not an export file",
            path.display(),
            kind_of(&meta)
        );
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    read_up_to(file, path, limit, meta.len())
}

fn read_up_to(file: std::fs::File, path: &Path, limit: u64, len: u64) -> Result<Vec<u8>> {
    if len > limit {
        return Err(too_large(path, limit));
    }
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| io_error(path, e))?;
    if out.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(out)
}

// Confinement.

/// Whether `path` lies in `root`, both as written (no file-system access): `root`
/// itself or below it, with no `..` left after the two are normalized.
pub fn lexically_inside(path: &Path, root: &Path) -> bool {
    let (p, r) = (normalize(path), normalize(root));
    match p.strip_prefix(&r) {
        Ok(rest) => rest.components().all(|c| matches!(c, Component::Normal(_))),
        Err(_) => false,
    }
}

/// The file a manifest or recipe names by `rel`, relative to `base`: `rel` must be
/// relative and lead, as written and on disk (symbolic links followed), into one of
/// `roots`, to a regular file. Returns the path as written (`base/rel` normalized) and
/// the path on disk, every link resolved.
pub fn confine(base: &Path, rel: &str, roots: &[PathBuf]) -> Result<(PathBuf, PathBuf), FileError> {
    let lexical = confine_lexically(base, rel, roots)?;
    let canonical = match std::fs::canonicalize(&lexical) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dangling = std::fs::symlink_metadata(&lexical).is_ok();
            return Err(FileError {
                path: lexical.clone(),
                missing: !dangling,
                message: if dangling {
                    format!("{rel} is a symbolic link to nothing")
                } else {
                    format!("{} does not exist", lexical.display())
                },
            });
        }
        Err(e) => {
            return Err(FileError::refused(
                &lexical,
                format!("cannot read {}: {e}", lexical.display()),
            ));
        }
    };
    let inside = roots.iter().any(|r| {
        std::fs::canonicalize(non_empty(r))
            .map(|r| canonical.starts_with(r))
            .unwrap_or(false)
    });
    if !inside {
        return Err(FileError::refused(
            &lexical,
            format!(
                "{rel} is a symbolic link that leads out of {} (to {}): stallscope reads only inside its folders",
                describe_roots(roots),
                canonical.display()
            ),
        ));
    }
    let meta = std::fs::metadata(&canonical)
        .map_err(|e| FileError::refused(&lexical, format!("cannot read {rel}: {e}")))?;
    if !meta.is_file() {
        return Err(FileError::refused(
            &lexical,
            format!(
                "{rel} is {}: stallscope reads regular files only",
                kind_of(&meta)
            ),
        ));
    }
    Ok((lexical, canonical))
}

/// The checks of [`confine`] that need no disk: `rel` relative, and inside a root as
/// written. Returns `base/rel` normalized.
pub fn confine_lexically(base: &Path, rel: &str, roots: &[PathBuf]) -> Result<PathBuf, FileError> {
    let given = Path::new(rel);
    if rel.trim().is_empty() {
        return Err(FileError::refused(base, "an empty path names no file"));
    }
    if given.has_root() || given.is_absolute() {
        return Err(FileError::refused(
            given,
            format!(
                "{rel} is an absolute path: name files relative to the ladder folder ({})",
                base.display()
            ),
        ));
    }
    let lexical = normalize(&base.join(given));
    if !roots.iter().any(|r| lexically_inside(&lexical, r)) {
        return Err(FileError::refused(
            &lexical,
            format!(
                "{rel} leads out of {}: stallscope reads only inside its folders",
                describe_roots(roots)
            ),
        ));
    }
    Ok(lexical)
}

/// `.` for an empty path (the working directory), which the file system does not take.
fn non_empty(p: &Path) -> &Path {
    if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    }
}

fn describe_roots(roots: &[PathBuf]) -> String {
    let names: Vec<String> = roots
        .iter()
        .map(|r| non_empty(r).display().to_string())
        .collect();
    names.join(" and ")
}

/// Whether a character reorders the text around it on a terminal or page (Unicode's
/// bidirectional controls: embeddings, overrides, isolates and marks), so that what is
/// shown is not what is written.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A plain folder name (a ladder): not empty, no path separator, not starting with a
/// dot (so neither `.` nor `..`), no control characters and no bidirectional controls
/// (which would show the name other than it is); it names one folder and nothing above
/// it.
pub fn check_folder_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 255
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control() || is_bidi_control(c));
    if !ok {
        bail!(
            "{what} {name:?} must be a plain folder name: not empty, at most 255 bytes, no '/', '\\', control character or bidirectional control (U+202E and the like), not starting with '.'"
        );
    }
    Ok(())
}

// Writing.

/// The prefix of the temporary files writes go through, so that what a killed process
/// left is recognised.
pub const TEMP_PREFIX: &str = ".stallscope-tmp-";

/// Writes a file so that readers see the old or the new content, never a part. An
/// existing file keeps its permissions; a new one gets the umask's.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    // Created with 0666: the kernel applies the umask, as for any new file.
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    if let Some(p) = existing {
        tmp.as_file()
            .set_permissions(p)
            .with_context(|| format!("cannot keep the permissions of {}", path.display()))?;
    }
    tmp.write_all(data)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    fault_point("a file written, before its rename");
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    sync_dir(dir);
    Ok(())
}

/// Flushes a folder's entries (the renames in it) to disk, where the system allows.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Makes `dir` (and what it lacks above it) and checks that it does not lead out of
/// `root` through a symbolic link: what is written there stays in `root`.
pub fn dir_inside(root: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let canonical_root = std::fs::canonicalize(non_empty(root))
        .with_context(|| format!("cannot resolve {}", root.display()))?;
    let canonical =
        std::fs::canonicalize(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
    if !canonical.starts_with(&canonical_root) {
        bail!(
            "{} leads out of {} (to {}) through a symbolic link: stallscope writes only inside it",
            dir.display(),
            root.display(),
            canonical.display()
        );
    }
    Ok(())
}

/// Swaps two folders in one step where the system can (Linux's `renameat2` with
/// `RENAME_EXCHANGE`): readers see one or the other at each name, never none. Elsewhere
/// two renames, through a third name.
pub fn exchange_dirs(a: &Path, b: &Path) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let ca = std::ffi::CString::new(a.as_os_str().as_bytes())?;
        let cb = std::ffi::CString::new(b.as_os_str().as_bytes())?;
        // SAFETY: two valid NUL-terminated paths, relative to the working directory.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
            return Err(e)
                .with_context(|| format!("cannot swap {} and {}", a.display(), b.display()));
        }
    }
    let aside = a.with_extension("swap");
    let rename = |from: &Path, to: &Path| {
        std::fs::rename(from, to)
            .with_context(|| format!("cannot rename {} to {}", from.display(), to.display()))
    };
    rename(b, &aside)?;
    rename(a, b)?;
    rename(&aside, a)
}

/// An exclusive lock on a folder's lock file, held until dropped: read-modify-write of
/// a ladder's manifest, run file and version folders happens under it, so that two
/// processes at once never lose each other's changes.
pub struct Lock {
    _file: std::fs::File,
}

/// The lock file in a ladder folder.
pub const LOCK_FILE: &str = ".stallscope.lock";

impl Lock {
    /// Waits for the lock of `dir` (which must exist).
    pub fn acquire(dir: &Path) -> Result<Lock> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        fs4::FileExt::lock(&file).with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(Lock { _file: file })
    }

    /// Whether a writer holds the lock of `dir` now (an import or a run under way),
    /// asked without waiting and without creating the lock file: a reader tells a live
    /// write from one that was killed this way.
    pub fn is_held(dir: &Path) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(dir.join(LOCK_FILE))
        else {
            return false;
        };
        // A shared lock taken is let go when the file closes, at once.
        matches!(
            fs4::FileExt::try_lock_shared(&file),
            Err(fs4::TryLockError::WouldBlock)
        )
    }
}

// Fault injection.

/// The environment variable that makes the process abort at its Nth fault point (from
/// 1): the tests kill an import at every point this way and find every version whole.
pub const FAULT_VAR: &str = "STALLSCOPE_ABORT_AT_STEP";
/// The environment variable that makes every fault point wait this many milliseconds:
/// the tests widen the window between a read and its write this way, so that writers
/// at once would lose each other's changes without the lock.
pub const DELAY_VAR: &str = "STALLSCOPE_FAULT_DELAY_MS";

static FAULT_STEP: AtomicU64 = AtomicU64::new(0);
static FAULT_DELAY_MS: AtomicU64 = AtomicU64::new(0);

/// Makes every fault point of this process wait (what [`DELAY_VAR`] does for a child).
pub fn set_fault_delay(ms: u64) {
    FAULT_DELAY_MS.store(ms, Ordering::Relaxed);
}

/// A point where a killed process leaves its files in a state readers must cope with,
/// or where a concurrent writer could come between a read and its write. With
/// [`FAULT_VAR`] set to N, the Nth point reached aborts the process on the spot (no
/// destructor runs, no file is cleaned), as `kill -9` would; with [`DELAY_VAR`] each
/// point waits.
pub fn fault_point(what: &str) {
    let env = |var: &str| std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok());
    let delay = match FAULT_DELAY_MS.load(Ordering::Relaxed) {
        0 => env(DELAY_VAR).unwrap_or(0),
        ms => ms,
    };
    if delay > 0 {
        std::thread::sleep(std::time::Duration::from_millis(delay));
    }
    let Some(at) = env(FAULT_VAR) else {
        return;
    };
    let step = FAULT_STEP.fetch_add(1, Ordering::SeqCst) + 1;
    if step == at {
        eprintln!("{FAULT_VAR}={at}: aborting at step {step} ({what})");
        std::process::abort();
    }
}

// Paths.

/// stallscope's cache: `$STALLSCOPE_CACHE`, else `$XDG_CACHE_HOME/stallscope`, else
/// `~/.cache/stallscope`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STALLSCOPE_CACHE") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("stallscope"))
}

/// Resolves `.` and `..` without touching the file system; a `..` that climbs above the
/// start is kept (`../../p` stays `../../p`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// `target` as seen from `base` (both relative to the working directory, or both
/// absolute): `kernels/fa/v01.cu` from `profiles/fa` is `../../kernels/fa/v01.cu`.
pub fn relative_path(target: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        normalize(&p)
    };
    let (t, b) = (abs(target), abs(base));
    let common = t
        .components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = PathBuf::new();
    for _ in b.components().skip(common) {
        out.push("..");
    }
    for c in t.components().skip(common) {
        out.push(c);
    }
    out
}

/// Reads a whole file. A large one (a raw page of a thousand launches is tens of MB) is
/// read into memory the kernel is asked to back with huge pages (see
/// [`advise_huge_pages`]).
pub fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    advise_huge_pages(&mut buf);
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Asks the kernel to back the capacity of a large buffer with 2 MiB pages (Linux's
/// transparent huge pages, where they are left to the program's choice): the tens of MB
/// a large export takes then cost some pages faults instead of thousands. Advice only:
/// the memory and its content are the same either way, and a refusal changes nothing.
pub fn advise_huge_pages<T>(buf: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = buf.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < 2 * HUGE {
            return;
        }
        let start = buf.as_mut_ptr() as usize;
        let (first, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
        if end > first {
            // SAFETY: the range lies inside the buffer's own allocation, and
            // MADV_HUGEPAGE changes how it is backed, never what it holds.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("kernels/fa/v01.cu"), Path::new("profiles/fa")),
            Path::new("../../kernels/fa/v01.cu")
        );
        assert_eq!(
            relative_path(Path::new("/a/b/c.cu"), Path::new("/a/p/q")),
            Path::new("../../b/c.cu")
        );
    }

    #[test]
    fn a_second_parent_step_does_not_cancel_the_first() {
        assert_eq!(normalize(Path::new("../../p")), Path::new("../../p"));
        assert_eq!(normalize(Path::new("a/../../p")), Path::new("../p"));
        assert_eq!(normalize(Path::new("a/./b/../c")), Path::new("a/c"));
        assert_eq!(normalize(Path::new("/../x")), Path::new("/x"));
    }

    #[test]
    fn a_path_climbing_out_of_its_root_is_not_inside_it() {
        let root = Path::new("profiles/fa");
        assert!(lexically_inside(Path::new("profiles/fa/v1/raw.csv"), root));
        assert!(!lexically_inside(Path::new("profiles/fa/../fb/x"), root));
        assert!(!lexically_inside(Path::new("profiles/fa/../../../x"), root));
        assert!(!lexically_inside(Path::new("../x"), Path::new("")));
    }

    #[test]
    fn a_file_written_again_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
        write_atomically(&path, b"{ }").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o604);
    }

    #[test]
    fn a_folder_name_with_a_bidirectional_control_is_refused() {
        assert!(check_folder_name("ladder name", "my-kernel").is_ok());
        for c in [
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
        ] {
            let e = check_folder_name("ladder name", &format!("a{c}b")).unwrap_err();
            assert!(!e.to_string().contains(c), "{e}");
        }
    }

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
    }
}
