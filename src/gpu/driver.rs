//! What the CUDA driver says about this machine without a context (is there a driver and
//! a GPU, which GPUs, which CUDA version), for the runner, the worker and `doctor`
//! alike, and the wording of the driver's errors.

use anyhow::{Result, anyhow};
use cudarc::driver::{DriverError, result, sys};

/// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
pub fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// A driver call's error as an [`anyhow::Error`] that says what was being done.
pub trait CudaResult<T> {
    fn cuda(self, what: &str) -> Result<T>;
}

impl<T> CudaResult<T> for std::result::Result<T, DriverError> {
    fn cuda(self, what: &str) -> Result<T> {
        self.map_err(|e| anyhow!("{what}: {}", describe(&e)))
    }
}

/// Why this machine cannot launch kernels, if it cannot. Touches no context.
pub fn unavailable() -> Option<String> {
    if !unsafe { sys::is_culib_present() } {
        return Some(
            "no CUDA driver found (libcuda.so.1): running kernels needs an NVIDIA GPU and its driver"
                .to_string(),
        );
    }
    if let Err(e) = result::init() {
        return Some(format!("the CUDA driver did not start: {}", describe(&e)));
    }
    match result::device::get_count() {
        Ok(0) => Some("the CUDA driver sees no GPU".to_string()),
        Ok(_) => None,
        Err(e) => Some(format!("cannot count GPUs: {}", describe(&e))),
    }
}

/// The GPUs the driver sees, by name ("0: NVIDIA H200"); the driver must be present
/// ([`unavailable`] says so).
pub fn device_names() -> Result<Vec<String>> {
    let n = result::device::get_count().cuda("cannot count GPUs")?;
    (0..n)
        .map(|i| {
            let d = result::device::get(i).cuda("cannot open a GPU")?;
            let name = result::device::get_name(d).cuda("device name")?;
            Ok(format!("{i}: {name}"))
        })
        .collect()
}

/// The CUDA version the driver supports ("13.0").
pub fn driver_cuda_version() -> Option<String> {
    // Without the library cudarc's loader panics on first use.
    if !unsafe { sys::is_culib_present() } {
        return None;
    }
    let mut v = 0;
    unsafe { sys::cuDriverGetVersion(&mut v) }.result().ok()?;
    Some(format!("{}.{}", v / 1000, v % 1000 / 10))
}
