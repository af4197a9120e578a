//===- DebugPrintTest.cpp - debug_print through the C API -----------------===//
//
// kiln_device_set_debug_print_callback gets each launch's text whole with
// the user pointer, kiln_device_set_debug_print_limit drops what is beyond
// it (docs/LangRef.md §14), and a NULL device is an error.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include <string>
#include <vector>

using namespace kiln::capi::test;

namespace {

const char *PrintText = R"(
kernel @p cube_dim(2) (%n: i64) {
  %u = unit_pos : u32
  debug_print "unit %u n=%lld\n", %u, %n
}
)";

struct Sink {
  std::vector<std::string> Launches;
  bool NulTerminated = true;
};

void collect(const char *Text, size_t Size, void *User) {
  auto *S = static_cast<Sink *>(User);
  S->NulTerminated &= Text[Size] == '\0';
  S->Launches.emplace_back(Text, Size);
}

TEST(CAPIDebugPrintTest, CallbackGetsEachLaunchWithItsUserPointer) {
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, PrintText);
  Sink S;
  ASSERT_KILN_OK(kiln_device_set_debug_print_callback(D, collect, &S));
  kiln_arg N = kiln_arg_i64(-9000000000LL);
  ASSERT_KILN_OK(kiln_device_launch(D, K, dim(1), &N, 1));
  ASSERT_EQ(S.Launches.size(), 1u);
  EXPECT_EQ(S.Launches[0], "unit 0 n=-9000000000\nunit 1 n=-9000000000\n");
  EXPECT_TRUE(S.NulTerminated);

  ASSERT_KILN_OK(kiln_device_set_debug_print_limit(D, 21));
  ASSERT_KILN_OK(kiln_device_launch(D, K, dim(1), &N, 1));
  ASSERT_EQ(S.Launches.size(), 2u);
  EXPECT_EQ(S.Launches[1], "unit 0 n=-9000000000\n"
                           "... 21 bytes of debug output dropped\n");

  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIDebugPrintTest, NullDeviceIsRefused) {
  Sink S;
  EXPECT_EQ(kiln_device_set_debug_print_callback(nullptr, collect, &S),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_device_set_debug_print_limit(nullptr, 1),
            KILN_ERROR_INVALID_ARGUMENT);
}

} // namespace
