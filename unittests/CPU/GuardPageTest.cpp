//===- GuardPageTest.cpp - The checked variant stays inside its buffers ---===//
//
// The bounds-checked variant (docs/LangRef.md §5.3) turns an access outside
// its buffer into a defined one: a load reads 0, a store or atomic is
// dropped. ASan cannot watch JIT-compiled code, so these tests put every
// buffer between inaccessible pages (PROT_NONE): its last byte is the last
// byte before one, its first byte the first after another. Any access the
// kernel makes outside the buffer, one byte or gigabytes away, ends the test
// binary with SIGSEGV; kernels here index before, at and far past the end,
// with scalars, lines and atomics, on buffers smaller than the kernel
// assumes and on buffers of zero elements.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace kiln::api;

namespace {

/// \p Bytes of memory between inaccessible pages: its last byte is the last
/// one before a guard page, or, when \p AtStart, its first byte the first
/// one after a guard page (and its last one too when \p Bytes is a whole
/// number of pages).
class GuardedMemory {
public:
  GuardedMemory(size_t Bytes, bool AtStart) : Bytes(Bytes) {
    Page = size_t(::sysconf(_SC_PAGESIZE));
    size_t Body = (Bytes + Page - 1) / Page * Page;
    Mapped = 2 * Page + (Body ? Body : Page);
    void *M = ::mmap(nullptr, Mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (M == MAP_FAILED)
      return;
    Base = static_cast<uint8_t *>(M);
    ::mprotect(Base, Page, PROT_NONE);
    ::mprotect(Base + Mapped - Page, Page, PROT_NONE);
    uint8_t *EndOfBody = Base + Mapped - Page;
    Data = AtStart ? Base + Page : EndOfBody - Bytes;
  }
  ~GuardedMemory() {
    if (Base)
      ::munmap(Base, Mapped);
  }
  GuardedMemory(const GuardedMemory &) = delete;
  GuardedMemory &operator=(const GuardedMemory &) = delete;

  bool ok() const { return Base != nullptr; }
  uint8_t *data() const { return Data; }
  Buffer buffer() const { return *Buffer::wrap(Data, Bytes); }

private:
  size_t Bytes, Page = 0, Mapped = 0;
  uint8_t *Base = nullptr, *Data = nullptr;
};

Device checkedDevice() {
  DeviceConfig C;
  C.Store = StoreMode::Off;
  C.Threads = 2;
  Result<Device> D = Device::create(C);
  EXPECT_TRUE(D.ok()) << D.status().str();
  return std::move(D).value();
}

ElementType u32Type() { return ElementType::scalar(ScalarType::U32); }

// Each unit loads and stores at an index far from its own: before the
// buffer (as u32, index -k is 2^32-k), at its end, and far past it. The
// kernel assumes 256 elements; the buffers hold fewer.
const char *StrayText = R"(
kernel @stray cube_dim(64) (%src: buffer<u32, read>, %dst: buffer<u32, read_write>,
                            %cnt: buffer<u32, read_write>, %lines: buffer<vec<4 x u32>, read_write>) {
  %u = absolute_pos : u32
  %far = mul %u, 16777259:u32 : u32
  %back = sub 0:u32, %u : u32
  %a = load %src[%u] : u32
  %b = load %src[%far] : u32
  %c = load %src[%back] : u32
  %s = add %a, %b : u32
  %t = add %s, %c : u32
  store %dst[%u], %t
  store %dst[%far], %u
  store %dst[%back], %u
  %old = atomic_add %cnt[%far], 1:u32 : u32
  %old2 = atomic_max %cnt[%back], %u : u32
  %x = atomic_add %cnt[%u], 1:u32 : u32
  %l = load %lines[%u] : vec<4 x u32>
  %m = load %lines[%back] : vec<4 x u32>
  %n = add %l, %m : vec<4 x u32>
  store %lines[%u], %n
  store %lines[%far], %n
}
)";

struct StrayCase {
  const char *Name;
  uint32_t Elements; // of every buffer; the kernel runs 256 units
  bool AtStart;
};

class GuardPageTest : public ::testing::TestWithParam<StrayCase> {};

TEST_P(GuardPageTest, CheckedKernelTouchesNothingOutsideItsBuffers) {
  StrayCase P = GetParam();
  Device D = checkedDevice();
  Result<Kernel> K = D.loadKernel(StrayText, "stray");
  ASSERT_TRUE(K.ok()) << K.status().str();

  GuardedMemory Src(P.Elements * 4, P.AtStart), Dst(P.Elements * 4, P.AtStart),
      Cnt(P.Elements * 4, P.AtStart), Lines(P.Elements * 16, P.AtStart);
  ASSERT_TRUE(Src.ok() && Dst.ok() && Cnt.ok() && Lines.ok());
  auto *S = reinterpret_cast<uint32_t *>(Src.data());
  auto *L = reinterpret_cast<uint32_t *>(Lines.data());
  for (uint32_t I = 0; I < P.Elements; ++I) {
    S[I] = 1000 + I;
    for (unsigned J = 0; J < 4; ++J)
      L[4 * I + J] = 10 * I + J;
  }
  std::memset(Dst.data(), 0, P.Elements * 4);
  std::memset(Cnt.data(), 0, P.Elements * 4);

  Status St = D.launch(
      *K, {4, 1, 1},
      {Arg::buffer(Src.buffer().view(u32Type()), Access::Read),
       Arg::buffer(Dst.buffer().view(u32Type())),
       Arg::buffer(Cnt.buffer().view(u32Type())),
       Arg::buffer(Lines.buffer().view(ElementType::line(ScalarType::U32, 4)))});
  ASSERT_TRUE(St.ok()) << St.str();

  // What the checked variant promises, element by element: unit u < count
  // stores src[u] + src[far] + src[back] with out-of-bounds loads as 0, and
  // no stray store or atomic lands anywhere (a far index is in bounds only
  // for unit 0, whose far and back indices are 0 too).
  auto *Out = reinterpret_cast<uint32_t *>(Dst.data());
  auto *Counts = reinterpret_cast<uint32_t *>(Cnt.data());
  auto loadOrZero = [&](uint64_t I) -> uint32_t {
    return I < P.Elements ? S[I] : 0;
  };
  const uint32_t Units = 256;
  for (uint32_t U = 0; U < P.Elements; ++U) {
    if (U >= Units) { // no unit of that index: untouched
      EXPECT_EQ(Out[U], 0u) << "dst[" << U << "]";
      EXPECT_EQ(Counts[U], 0u) << "cnt[" << U << "]";
      continue;
    }
    uint32_t Far = uint32_t(uint64_t(U) * 16777259u);
    uint32_t Back = uint32_t(0u - U);
    uint32_t Want = loadOrZero(U) + loadOrZero(Far) + loadOrZero(Back);
    if (U == 0)
      Want = 0; // unit 0's own store comes first, then store %dst[0], 0 twice
    EXPECT_EQ(Out[U], Want) << "dst[" << U << "]";
    // cnt[u] gets unit u's atomic_add; cnt[0] also unit 0's far add and
    // its atomic_max of 0.
    EXPECT_EQ(Counts[U], U == 0 ? 2u : 1u) << "cnt[" << U << "]";
  }
  for (uint32_t U = 1; U < P.Elements; ++U)
    for (unsigned J = 0; J < 4; ++J) // back index of unit u >= 1: out of bounds
      EXPECT_EQ(L[4 * U + J], 10 * U + J) << "lines[" << U << "]." << J;
}

INSTANTIATE_TEST_SUITE_P(
    SmallerThanAssumed, GuardPageTest,
    ::testing::Values(StrayCase{"Zero", 0, false}, StrayCase{"One", 1, false},
                      StrayCase{"Seventeen", 17, false},
                      StrayCase{"SeventeenAtPageStart", 17, true},
                      StrayCase{"OnePage", 1024, true}),
    [](const auto &Info) { return std::string(Info.param.Name); });

} // namespace
