// The optional no-TF32 check: the SASS scan, and (where cuobjdump exists) a real TF32 kernel.
#include <gtest/gtest.h>

#include "bundle/sass_tf32.h"
#include "host/bundle/bundle_test_util.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

using namespace tensoracle::testing;

// Lines as cuobjdump 13 prints them for a wmma tf32 kernel and for the example's fp32 kernel.
const char* kSass = R"SASS(
	code for sm_90
		Function : tf32_gemm
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0250*/                   HMMA.1684.F32.TF32 R12, R8.reuse, R20, RZ ;   /* 0x00000014080c723c */
		Function : scale_bias
        /*0070*/                   FFMA R5, R2, c[0x0][0x218], R5 ;   /* 0x0000860002057a23 */
        /*0080*/              @!P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;   /* 0x0000000c0804723c */
)SASS";

TEST(NoTf32, ScanFindsTf32InstructionsAndNamesTheKernel) {
  EXPECT_EQ(bundle::scan_sass_for_tf32(kSass),
            (std::vector<std::string>{"tf32_gemm: HMMA.1684.F32.TF32 R12, R8.reuse, R20, RZ ;"}));
  EXPECT_TRUE(bundle::scan_sass_for_tf32("").empty());
}

TEST(NoTf32, RealCubins) {
  auto cuobjdump = find_cuobjdump();
  if (!cuobjdump.is_ok()) GTEST_SKIP() << "needs cuobjdump: " << cuobjdump.status().message();
  ScratchDir scratch;
  write_bytes(scratch.path() / "tf32.cu", R"(#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void tf32_gemm(const float* a, const float* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 8);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
)");
  CompileBundleOptions options;
  options.name = "tf32";
  options.version = "1";
  options.sources = {scratch / "tf32.cu"};
  options.architectures = {GpuArch{90}};
  options.out_dir = scratch / "tf32_bundle";
  ASSERT_TRUE(compile_bundle(options).is_ok());

  InspectOptions inspect;
  inspect.check_no_tf32 = true;
  const InspectReport bad = *inspect_bundle(options.out_dir, inspect);
  EXPECT_EQ(failed_check_names(bad), std::vector<std::string>{"no_tf32(sm_90/tf32.cubin)"});
  EXPECT_NE(checks_named(bad, bundle_checks::kNoTf32).at(0).reason.find("tf32_gemm: HMMA"), std::string::npos);

  const InspectReport good = *inspect_bundle(example_bundle().string(), inspect);
  EXPECT_TRUE(good.passed()) << inspect_report_to_text(good);
  EXPECT_EQ(checks_named(good, bundle_checks::kNoTf32).size(), 4u);
}

}  // namespace
}  // namespace tensoracle
