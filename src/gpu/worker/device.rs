//! A thin layer over the CUDA driver (through cudarc): one context and stream, device
//! buffers, modules, raw kernel launches and event timing. Every call's error carries
//! the CUDA error's name and text.

use crate::gpu::driver::{CudaResult, unavailable};
use crate::gpu::nvrtc::Compiler;
use crate::recipe::Launch;
use anyhow::{Context, Result, bail};
use cudarc::driver::{CudaContext, CudaModule, result, sys};
use std::ffi::c_void;
use std::sync::Arc;

pub struct Device {
    pub ctx: Arc<CudaContext>,
    /// A stream of its own (the legacy default stream cannot be captured into a graph).
    _stream: Arc<cudarc::driver::CudaStream>,
    stream: sys::CUstream,
    pub name: String,
    /// `GPU-xxxxxxxx-…`, as NVML names the same GPU.
    pub uuid: String,
    pub cc: (i32, i32),
    pub compiler: Compiler,
}

/// A device allocation, freed on drop.
pub struct Buffer {
    pub ptr: sys::CUdeviceptr,
    pub bytes: usize,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe {
            let _ = result::free_sync(self.ptr);
        }
    }
}

/// A loaded kernel.
#[derive(Clone)]
pub struct Kernel {
    _module: Arc<CudaModule>,
    func: sys::CUfunction,
    pub name: String,
    /// ptxas's resource report, when compiled now.
    pub resources: Option<String>,
}

impl Device {
    pub fn open() -> Result<Device> {
        if let Some(why) = unavailable() {
            bail!(why);
        }
        let ctx = CudaContext::new(0).cuda("cannot create a CUDA context on device 0")?;
        // Launches are timed back to back: no per-launch event bookkeeping.
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name().cuda("device name")?;
        let cc = ctx.compute_capability().cuda("compute capability")?;
        let arch = match cc {
            (9, 0) => "sm_90a".to_string(),
            (10, 0) => "sm_100a".to_string(),
            (maj, min) => format!("sm_{maj}{min}"),
        };
        let uuid = format_uuid(&ctx.uuid().cuda("device UUID")?);
        let owned = ctx.new_stream().cuda("cannot create a stream")?;
        Ok(Device {
            compiler: Compiler::new(&arch)?,
            stream: owned.cu_stream(),
            _stream: owned,
            ctx,
            name,
            uuid,
            cc,
        })
    }

    pub fn alloc(&self, bytes: usize) -> Result<Buffer> {
        self.ctx.bind_to_thread().cuda("bind context")?;
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }
            .cuda(&format!("cannot allocate {bytes} bytes on the GPU"))?;
        Ok(Buffer { ptr, bytes })
    }

    pub fn upload<T: Copy>(&self, data: &[T]) -> Result<Buffer> {
        let buf = self.alloc(std::mem::size_of_val(data))?;
        unsafe { result::memcpy_htod_sync(buf.ptr, data) }.cuda("copy to the GPU")?;
        Ok(buf)
    }

    pub fn download<T: Copy + Default>(&self, buf: &Buffer) -> Result<Vec<T>> {
        let mut out = vec![T::default(); buf.bytes / std::mem::size_of::<T>()];
        self.sync()?;
        unsafe { result::memcpy_dtoh_sync(&mut out, buf.ptr) }.cuda("copy from the GPU")?;
        Ok(out)
    }

    /// Fills a buffer with one 16-bit pattern (0x7E00 is an fp16 NaN: the poison).
    pub fn fill_u16(&self, buf: &Buffer, pattern: u16) -> Result<()> {
        unsafe { sys::cuMemsetD16Async(buf.ptr, pattern, buf.bytes / 2, self.stream) }
            .result()
            .cuda("memset")
    }

    pub fn zero(&self, buf: &Buffer) -> Result<()> {
        unsafe { result::memset_d8_async(buf.ptr, 0, buf.bytes, self.stream) }.cuda("memset")
    }

    /// Compiles (or takes from the cache) and loads one entry point.
    pub fn kernel(
        &self,
        file: &str,
        source: &str,
        entry: &str,
        options: &[String],
    ) -> Result<Kernel> {
        let compiled = self.compiler.compile(file, source, options)?;
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin))
            .cuda(&format!("cannot load the module of {file}"))?;
        let func = module
            .load_function(entry)
            .cuda(&format!(
                "{file} has no kernel named {entry} (is it extern \"C\"?)"
            ))?
            .cu_function();
        Ok(Kernel {
            _module: module,
            func,
            name: entry.to_string(),
            resources: crate::gpu::nvrtc::resource_summary_of(&compiled.log, entry),
        })
    }

    /// Writes `value` into the module global `name` of the kernel's module (the trace
    /// buffer's address and capacity: a kernel's arguments stay its own).
    pub fn set_global(&self, k: &Kernel, name: &str, value: &[u8]) -> Result<()> {
        use cudarc::driver::DevicePtr;
        let view = k
            ._module
            .get_global(name, &self._stream)
            .cuda(&format!("{} has no module global {name}", k.name))?;
        if view.len() != value.len() {
            bail!(
                "{}'s global {name} is {} bytes, not {}",
                k.name,
                view.len(),
                value.len()
            );
        }
        let (ptr, _record) = view.device_ptr(&self._stream);
        unsafe { result::memcpy_htod_sync(ptr, value) }.cuda(&format!("setting {name}"))
    }

    /// Lets `k` have `l`'s dynamic shared memory (past 48 KiB it must opt in).
    fn allow_shared(&self, k: &Kernel, l: &Launch) -> Result<()> {
        if l.shared_bytes > 48 * 1024 {
            unsafe {
                result::function::set_function_attribute(
                    k.func,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    l.shared_bytes as i32,
                )
            }
            .cuda(&format!(
                "{} asks for {} bytes of shared memory",
                k.name, l.shared_bytes
            ))?;
        }
        Ok(())
    }

    /// The most clusters of `k`'s compiled cluster shape (`__cluster_dims__`) that this
    /// GPU holds at once, each block with `l`'s threads and shared memory.
    pub fn max_active_clusters(&self, k: &Kernel, l: &Launch) -> Result<u32> {
        use sys::CUfunction_attribute::{
            CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH as DEPTH,
            CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT as HEIGHT,
            CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH as WIDTH,
        };
        let dim = |a| {
            unsafe { result::function::get_function_attribute(k.func, a) }
                .cuda(&format!("{}'s cluster shape", k.name))
        };
        let (w, h, d) = (dim(WIDTH)?, dim(HEIGHT)?, dim(DEPTH)?);
        if w <= 0 {
            bail!(
                "{}'s launch names CLUSTERS, but the kernel has no compiled cluster shape \
                 (__cluster_dims__)",
                k.name
            );
        }
        self.allow_shared(k, l)?;
        let config = sys::CUlaunchConfig {
            gridDimX: w as u32,
            gridDimY: h.max(1) as u32,
            gridDimZ: d.max(1) as u32,
            blockDimX: l.block.0,
            blockDimY: l.block.1,
            blockDimZ: l.block.2,
            sharedMemBytes: l.shared_bytes,
            hStream: self.stream,
            attrs: std::ptr::null_mut(),
            numAttrs: 0,
        };
        let mut n = 0;
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, k.func, &config) }
            .result()
            .cuda(&format!("the clusters of {} this GPU holds", k.name))?;
        if n <= 0 {
            bail!(
                "this GPU holds no cluster of {}: {w}×{h}×{d} blocks of {}×{}×{} threads and \
                 {} bytes of shared memory each",
                k.name,
                l.block.0,
                l.block.1,
                l.block.2,
                l.shared_bytes
            );
        }
        Ok(n as u32)
    }

    /// Launches a kernel. `args` point at the argument values, in order.
    pub fn launch(&self, k: &Kernel, l: &Launch, args: &mut [*mut c_void]) -> Result<()> {
        self.launch_in(k, l, args, self.stream)
    }

    /// [`Device::launch`] on another stream of this context ([`Device::new_stream`]).
    pub fn launch_on(
        &self,
        k: &Kernel,
        l: &Launch,
        args: &mut [*mut c_void],
        stream: &cudarc::driver::CudaStream,
    ) -> Result<()> {
        self.launch_in(k, l, args, stream.cu_stream())
    }

    fn launch_in(
        &self,
        k: &Kernel,
        l: &Launch,
        args: &mut [*mut c_void],
        stream: sys::CUstream,
    ) -> Result<()> {
        self.allow_shared(k, l)?;
        unsafe { result::launch_kernel(k.func, l.grid, l.block, l.shared_bytes, stream, args) }
            .cuda(&format!("launch of {}", k.name))
    }

    /// A stream besides the device's own, for launches that run at once with it
    /// ([`super::problem::Problem::run_on`]); [`Device::sync`] waits for it too.
    pub fn new_stream(&self) -> Result<Arc<cudarc::driver::CudaStream>> {
        self.ctx.new_stream().cuda("cannot create a stream")
    }

    /// Waits for the GPU; a kernel's fault shows here.
    pub fn sync(&self) -> Result<()> {
        self.ctx.synchronize().cuda("kernel execution")
    }

    /// Milliseconds the GPU spent on `work` (CUDA events with timing enabled).
    pub fn time_ms(&self, mut work: impl FnMut() -> Result<()>) -> Result<f64> {
        let start = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).cuda("event")?;
        let end = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).cuda("event")?;
        let out = (|| {
            unsafe { result::event::record(start, self.stream) }.cuda("event record")?;
            work()?;
            unsafe { result::event::record(end, self.stream) }.cuda("event record")?;
            unsafe { result::event::synchronize(end) }.cuda("kernel execution")?;
            let ms = unsafe { result::event::elapsed(start, end) }.cuda("event time")?;
            Ok(ms as f64)
        })();
        unsafe {
            let _ = result::event::destroy(start);
            let _ = result::event::destroy(end);
        }
        out
    }

    /// Captures `n` calls of `work` (launches on this device's stream) into a graph.
    pub fn capture(&self, n: u32, mut work: impl FnMut() -> Result<()>) -> Result<Graph> {
        use sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        unsafe { sys::cuStreamBeginCapture_v2(self.stream, CU_STREAM_CAPTURE_MODE_RELAXED) }
            .result()
            .cuda("cannot start capturing a graph")?;
        let launched = (0..n).try_for_each(|_| work());
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        let ended = unsafe { sys::cuStreamEndCapture(self.stream, &mut graph) }
            .result()
            .cuda("cannot finish capturing a graph");
        launched?;
        ended?;
        let mut exec: sys::CUgraphExec = std::ptr::null_mut();
        let made = unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }
            .result()
            .cuda("cannot instantiate a graph");
        unsafe {
            let _ = sys::cuGraphDestroy(graph);
        }
        made?;
        Ok(Graph {
            exec,
            stream: self.stream,
        })
    }

    /// Milliseconds of each of `count` calls of `work`, queued back to back (no host
    /// synchronisation between them), timed with one event between consecutive calls.
    pub fn time_each(
        &self,
        count: usize,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let mut events = Vec::with_capacity(count + 1);
        let out = (|| {
            for i in 0..=count {
                let e =
                    result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).cuda("event")?;
                events.push(e);
                unsafe { result::event::record(e, self.stream) }.cuda("event record")?;
                if i < count {
                    work()?;
                }
            }
            let last = *events.last().expect("count + 1 events");
            unsafe { result::event::synchronize(last) }.cuda("kernel execution")?;
            events
                .windows(2)
                .map(|w| {
                    unsafe { result::event::elapsed(w[0], w[1]) }
                        .cuda("event time")
                        .map(|ms| ms as f64)
                })
                .collect()
        })();
        for e in events {
            unsafe {
                let _ = result::event::destroy(e);
            }
        }
        out
    }

    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }

    pub fn sm_count(&self) -> Result<i32> {
        self.ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .cuda("SM count")
    }
}

/// An instantiated CUDA graph, destroyed on drop.
pub struct Graph {
    exec: sys::CUgraphExec,
    stream: sys::CUstream,
}

impl Graph {
    pub fn launch(&self) -> Result<()> {
        unsafe { sys::cuGraphLaunch(self.exec, self.stream) }
            .result()
            .cuda("graph launch")
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        unsafe {
            let _ = sys::cuGraphExecDestroy(self.exec);
        }
    }
}

/// `GPU-` and the 16 bytes as 8-4-4-4-12 hex digits, the way NVML and nvidia-smi write it.
pub fn format_uuid(u: &sys::CUuuid) -> String {
    let b: Vec<u8> = u.bytes.iter().map(|&c| c as u8).collect();
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// A TMA descriptor as a kernel argument (`const __grid_constant__` 128-byte struct).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct TensorMap(pub sys::CUtensorMap);

/// Encodes a 2-D fp16 tensor map over a row-major [rows, cols] matrix.
pub fn tensor_map_2d(
    base: sys::CUdeviceptr,
    rows: u64,
    cols: u64,
    box_rows: u32,
    box_cols: u32,
    swizzle: u32,
) -> Result<TensorMap> {
    use sys::CUtensorMapSwizzle::*;
    let swizzle = match swizzle {
        0 => CU_TENSOR_MAP_SWIZZLE_NONE,
        32 => CU_TENSOR_MAP_SWIZZLE_32B,
        64 => CU_TENSOR_MAP_SWIZZLE_64B,
        128 => CU_TENSOR_MAP_SWIZZLE_128B,
        other => bail!("swizzle {other} (0, 32, 64 or 128)"),
    };
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    let dims = [cols, rows];
    let strides = [cols * 2];
    let boxes = [box_cols, box_rows];
    let elem = [1u32, 1];
    unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            2,
            base as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .cuda("cuTensorMapEncodeTiled")
    .context("building a TMA tensor map")?;
    Ok(TensorMap(unsafe { map.assume_init() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_as_nvml_writes_them() {
        let mut u = sys::CUuuid { bytes: [0; 16] };
        for (i, b) in u.bytes.iter_mut().enumerate() {
            *b = (i as u8 * 17) as std::ffi::c_char;
        }
        assert_eq!(format_uuid(&u), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }
}
