//! What users have: exports of every ncu version (older section and metric names, the
//! names kernels are written with), and the pages of one launch read as one profile.
//! Fixtures under tests/fixtures/ncu-versions reproduce each layout; the real exports
//! of tests/fixtures/h200 and tests/fixtures/sgemm check the same on ncu's own output.

mod common;

use stallscope::model::short_kernel_name;

// Kernel names as ncu writes them.

#[test]
fn an_unbalanced_anonymous_namespace_keeps_the_kernel_name() {
    assert_eq!(
        short_kernel_name(
            "void unnamed>::gemm_tiled_kernel<32>(const float *, const float *, float *, int)"
        ),
        "gemm_tiled_kernel"
    );
}

#[test]
fn a_balanced_anonymous_namespace_keeps_the_kernel_name() {
    assert_eq!(
        short_kernel_name("void (anonymous namespace)::reduce<float>(float *, int)"),
        "reduce"
    );
}

#[test]
fn a_return_type_other_than_void_is_not_the_name() {
    assert_eq!(
        short_kernel_name(
            "enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, float, false, true, false, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>, float>>(T13)"
        ),
        "kernel"
    );
}

#[test]
fn numba_names_drop_their_abi_tag_and_array_types() {
    assert_eq!(
        short_kernel_name(
            "cudapy::__main__::copy_blocked[abi:v1,cw51cXTLSUwv1sCUt9Ww0FEw09RRQPKiLTj0gIGIFp_2b2oLQFEYYkHSQB1OQAk0Bynm21OiQ1Q_3d_3d](Array<float, 2, C, mutable, aligned>, Array<float, 2, C, mutable, aligned>)"
        ),
        "copy_blocked"
    );
}

#[test]
fn a_lambda_in_the_template_arguments_is_skipped() {
    assert_eq!(
        short_kernel_name(
            "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::AddFunctor<float>>(at::TensorIteratorBase &, const T1 &)::{lambda(int)#1}>(int, T3)"
        ),
        "elementwise_kernel"
    );
}

#[test]
fn a_lambda_with_a_return_type_arrow_is_skipped() {
    assert_eq!(
        short_kernel_name(
            "void cub::detail::for_each::static_kernel<Policy, int, lambda [](int)->void>(T2, T3)"
        ),
        "static_kernel"
    );
}

#[test]
fn a_kernel_that_is_a_lambda_is_named_by_it() {
    assert_eq!(
        short_kernel_name("main::{lambda(int)#1}"),
        "{lambda(int)#1}"
    );
}

#[test]
fn an_operator_keeps_its_symbol() {
    assert_eq!(
        short_kernel_name("void Apply<float>::operator()(float *, int) const"),
        "operator()"
    );
    assert_eq!(short_kernel_name("Stream::operator<<(int)"), "operator<<");
}

#[test]
fn plain_names_stay_as_they_are() {
    assert_eq!(
        short_kernel_name("triton_poi_fused_add_0"),
        "triton_poi_fused_add_0"
    );
    assert_eq!(
        short_kernel_name("mm_naive(const float *, int)"),
        "mm_naive"
    );
}
