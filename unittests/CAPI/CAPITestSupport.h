//===- CAPITestSupport.h - Kernels and helpers of the C API tests -*- C++
//-*-===//

#ifndef KILN_UNITTESTS_CAPI_CAPITESTSUPPORT_H
#define KILN_UNITTESTS_CAPI_CAPITESTSUPPORT_H

#include "Support/Kernels.h"
#include "kiln-c/kiln.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

/// Expects KILN_OK, printing the last error otherwise.
#define EXPECT_KILN_OK(Call)                                                   \
  do {                                                                         \
    kiln_status S_ = (Call);                                                   \
    EXPECT_EQ(S_, KILN_OK) << #Call << ": " << kiln_status_name(S_) << ": "    \
                           << kiln_last_error();                               \
  } while (0)
#define ASSERT_KILN_OK(Call)                                                   \
  do {                                                                         \
    kiln_status S_ = (Call);                                                   \
    ASSERT_EQ(S_, KILN_OK) << #Call << ": " << kiln_status_name(S_) << ": "    \
                           << kiln_last_error();                               \
  } while (0)

namespace kiln::capi::test {

using kiln::test::AffineText;
using kiln::test::VaddText;

/// Keeps its one unit busy: data[0] = the sum of data[0] over iters
/// iterations (a chain of dependent float adds that cannot be folded).
inline constexpr const char *SpinText =
    R"(kernel @spin cube_dim(1) (%data: buffer<f32, read_write>, %iters: u32) {
  %acc = var f32
  set %acc, 0.0:f32
  for %k = 0:u32 to %iters {
    %v = load %data[0] : f32
    %a = get %acc : f32
    %s = add %a, %v : f32
    set %acc, %s
  }
  %r = get %acc : f32
  store %data[0], %r
}
)";

/// A device without a persistent store, so that tests depend on none.
inline kiln_device memoryDevice() {
  kiln_device_config Config;
  EXPECT_KILN_OK(kiln_device_config_init(&Config));
  Config.store_mode = KILN_STORE_OFF;
  kiln_device D = nullptr;
  EXPECT_KILN_OK(kiln_device_create(&Config, &D));
  return D;
}

inline kiln_kernel loadKernel(kiln_device D, const char *Text,
                              const char *Name = nullptr) {
  kiln_kernel K = nullptr;
  EXPECT_KILN_OK(kiln_device_load_kernel(D, Text, Name, nullptr, &K));
  return K;
}

/// A Kiln buffer holding \p Values.
inline kiln_buffer floatBuffer(const std::vector<float> &Values) {
  kiln_buffer B = nullptr;
  EXPECT_KILN_OK(kiln_buffer_allocate(Values.size() * sizeof(float), &B));
  void *Data = nullptr;
  EXPECT_KILN_OK(kiln_buffer_data(B, &Data));
  if (Data && !Values.empty())
    std::memcpy(Data, Values.data(), Values.size() * sizeof(float));
  return B;
}

/// The floats of \p B (no synchronisation: the caller's job).
inline std::vector<float> floatsOf(kiln_buffer B) {
  void *Data = nullptr;
  uint64_t Size = 0;
  EXPECT_KILN_OK(kiln_buffer_data(B, &Data));
  EXPECT_KILN_OK(kiln_buffer_size(B, &Size));
  std::vector<float> V(Size / sizeof(float));
  if (Data && !V.empty())
    std::memcpy(V.data(), Data, V.size() * sizeof(float));
  return V;
}

/// Stores \p V in the C enum \p Field as a C caller may (any int is a valid
/// C enum value), without converting an out-of-range int to the C++ enum
/// type, which would be undefined.
template <typename E> void setRaw(E &Field, int V) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  std::memcpy(&Field, &V, sizeof(V));
}

inline kiln_dim3 dim(uint32_t X) { return kiln_dim3{X, 1, 1}; }

inline kiln_element_type f32() { return kiln_scalar(KILN_F32); }

/// Whether the last error contains \p Part (for EXPECT_TRUE with a message).
inline ::testing::AssertionResult lastErrorHas(const std::string &Part) {
  std::string E = kiln_last_error();
  if (E.find(Part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the last error \"" << E << "\" does not contain \"" << Part
         << "\"";
}

} // namespace kiln::capi::test

#endif // KILN_UNITTESTS_CAPI_CAPITESTSUPPORT_H
