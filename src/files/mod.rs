//! Small file-system helpers shared by every side of the crate, one room a concern:
//!
//! * [`limits`]: how much of one file is read and how far a gzip export may inflate
//!   (the defaults, the flags' sizes as written and shown);
//! * [`read`]: reads that take regular files only and stop at the per-file limit;
//! * [`confine`]: files a manifest or recipe names, kept inside the folders they may
//!   name, and folders made for writing kept inside their root;
//! * [`paths`]: paths as written, normalized and made relative without the disk;
//! * [`names`]: folder names (a ladder's) and the characters that hide what they say;
//! * [`write`]: atomic writes keeping permissions, folders flushed and swapped;
//! * [`lock`]: the ladder lock that read-modify-write holds;
//! * [`fault`]: the fault points the tests abort or hold open;
//! * [`cache`]: stallscope's cache folder;
//! * [`huge_pages`]: the advice that backs a large buffer with 2 MiB pages;
//! * [`mapped`]: a large file's bytes mapped instead of copied.
//!
//! None of them names any other module of the crate.

pub mod cache;
pub mod confine;
pub mod fault;
pub mod huge_pages;
pub mod limits;
pub mod lock;
pub mod mapped;
pub mod names;
pub mod paths;
pub mod read;
pub mod write;
