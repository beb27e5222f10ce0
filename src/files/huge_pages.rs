//! Advice to the kernel on how to back a large buffer: with 2 MiB pages.

/// Asks the kernel to back the capacity of a large buffer with 2 MiB pages (Linux's
/// transparent huge pages, where they are left to the program's choice): the tens of MB
/// a large export takes then cost some pages faults instead of thousands. Advice only:
/// the memory and its content are the same either way, and a refusal changes nothing.
pub fn advise<T>(buf: &mut Vec<T>) {
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
