//===- LoweringHarness.cpp - Lower, verify and JIT kernels in unit tests
//---===//

#include "LoweringHarness.h"

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/DebugPrint.h"

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

llvm::Error kiln::test::defineRuntimeSymbols(llvm::orc::LLJIT &JIT) {
  // The test binaries do not export the runtime's functions dynamically:
  // define them as JITLinker does.
  llvm::orc::SymbolMap Runtime;
  Runtime[JIT.mangleAndIntern(debugPrintSymbol())] = {
      llvm::orc::ExecutorAddr::fromPtr(&kiln_debug_print),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return JIT.getMainJITDylib().define(
      llvm::orc::absoluteSymbols(std::move(Runtime)));
}

using namespace kiln;
using namespace kiln::test;

static std::string errorText(llvm::Error E) {
  return llvm::toString(std::move(E));
}

LoweredModule kiln::test::lowerOnly(llvm::StringRef Text,
                                    llvm::LLVMContext &Ctx, CpuVariant Variant,
                                    DeviceLimits Limits) {
  auto Mod = parseModule(Text, "test.kiln");
  if (!Mod) {
    ADD_FAILURE() << "parse: " << errorText(Mod.takeError());
    return {};
  }
  if (llvm::Error E = verifyModule(*Mod, Limits)) {
    ADD_FAILURE() << "verify: " << errorText(std::move(E));
    return {};
  }
  if (Mod->Kernels.empty()) {
    ADD_FAILURE() << "no kernel";
    return {};
  }
  auto L = lowerKernel(Mod->Kernels[0], Variant, Limits, Ctx);
  if (!L) {
    ADD_FAILURE() << "lower: " << errorText(L.takeError());
    return {};
  }
  std::string Problems;
  llvm::raw_string_ostream OS(Problems);
  EXPECT_FALSE(llvm::verifyModule(*L->Module, &OS)) << Problems;
  return std::move(*L);
}

/// Runs the backend's own O3 pipeline (kiln::optimizeModule) on \p M for
/// \p Target (the host CPU and its features by default).
static void optimizeFor(llvm::Module &M, const CodeGenOptions &Target) {
  auto TM = createTargetMachine(Target);
  if (!TM) {
    ADD_FAILURE() << "target: " << llvm::toString(TM.takeError());
    return;
  }
  if (llvm::Error E = optimizeModule(M, **TM, 3))
    ADD_FAILURE() << llvm::toString(std::move(E));
}

JitKernel kiln::test::compile(llvm::StringRef Text, CpuVariant Variant,
                              DeviceLimits Limits, bool OptimizeO3,
                              const CodeGenOptions &Target) {
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  JitKernel Out;
  auto Ctx = std::make_unique<llvm::LLVMContext>();
  LoweredModule L = lowerOnly(Text, *Ctx, Variant, Limits);
  if (!L.Module)
    return Out;
  llvm::raw_string_ostream OS(Out.LLVMIR);
  L.Module->print(OS, nullptr);
  Out.Metadata = L.Metadata;
  Out.BufferAlignment = Variant.BufferAlignment;
  if (OptimizeO3) {
    optimizeFor(*L.Module, Target);
    llvm::raw_string_ostream OptOS(Out.OptimizedIR);
    L.Module->print(OptOS, nullptr);
  }
  auto JIT = llvm::orc::LLJITBuilder().create();
  if (!JIT) {
    ADD_FAILURE() << "jit: " << errorText(JIT.takeError());
    return Out;
  }
  auto &DL = (*JIT)->getDataLayout();
  auto Gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      DL.getGlobalPrefix());
  if (!Gen) {
    ADD_FAILURE() << "generator: " << errorText(Gen.takeError());
    return Out;
  }
  (*JIT)->getMainJITDylib().addGenerator(std::move(*Gen));
  if (llvm::Error E = defineRuntimeSymbols(**JIT)) {
    ADD_FAILURE() << "runtime symbols: " << errorText(std::move(E));
    return Out;
  }
  if (llvm::Error E = (*JIT)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(L.Module), std::move(Ctx)))) {
    ADD_FAILURE() << "add module: " << errorText(std::move(E));
    return Out;
  }
  auto Sym = (*JIT)->lookup(Out.Metadata.Symbol);
  if (!Sym) {
    ADD_FAILURE() << "lookup: " << errorText(Sym.takeError());
    return Out;
  }
  Out.Fn = Sym->toPtr<CubeFunction>();
  Out.JIT = std::move(*JIT);
  return Out;
}

void JitKernel::launch(std::vector<KernelArg> Args,
                       std::array<uint32_t, 3> Count,
                       bool OneCubePerCall,
                       const TensorInfo *Tensors) const {
  ASSERT_NE(Fn, nullptr);
  ASSERT_EQ(Args.size(), Metadata.Params.size());
  size_t Bytes = (std::max<uint64_t>(Metadata.ScratchBytes, 64) + 63) / 64 * 64;
  void *Scratch = std::aligned_alloc(64, Bytes);
  std::memset(Scratch, 0xCD, Bytes);
  // Buffers the code may not assume aligned (a std::vector's storage) run
  // on aligned copies, written back afterwards: a64 code vectorised with
  // aligned accesses faults on a misaligned buffer, and the runtime never
  // gives it one.
  struct AlignedCopy {
    void *Original;
    void *Copy;
    size_t Bytes;
  };
  std::vector<AlignedCopy> Copies;
  for (size_t I = 0; I < Args.size(); ++I) {
    const ParamMetadata &P = Metadata.Params[I];
    uint32_t Align = std::max<uint32_t>(BufferAlignment, 1);
    if (!P.IsBuffer || P.IsTensorMap || !Args[I].Data ||
        reinterpret_cast<uintptr_t>(Args[I].Data) % Align == 0)
      continue;
    size_t Bytes = Args[I].Count * P.Ty.storeSize();
    size_t Rounded = (std::max<size_t>(Bytes, 1) + Align - 1) / Align * Align;
    void *Copy = std::aligned_alloc(std::max<uint32_t>(Align, 8), Rounded);
    std::memcpy(Copy, Args[I].Data, Bytes);
    Copies.push_back({Args[I].Data, Copy, Bytes});
    Args[I].Data = Copy;
  }
  LaunchArgs LA{Args.data(), {Count[0], Count[1], Count[2]}, 0, nullptr};
  LA.Tensors = Tensors;
  uint32_t Total = Count[0] * Count[1] * Count[2];
  if (OneCubePerCall) {
    for (uint32_t C = 0; C < Total; ++C)
      Fn(&LA, C, C + 1, Scratch);
  } else {
    Fn(&LA, 0, Total, Scratch);
  }
  std::free(Scratch);
  for (const AlignedCopy &C : Copies) {
    std::memcpy(C.Original, C.Copy, C.Bytes);
    std::free(C.Copy);
  }
}

static uint16_t toSmall(float F, const llvm::fltSemantics &S) {
  llvm::APFloat A(F);
  bool Lost;
  A.convert(S, llvm::APFloat::rmNearestTiesToEven, &Lost);
  return static_cast<uint16_t>(A.bitcastToAPInt().getZExtValue());
}
static float fromSmall(uint16_t H, const llvm::fltSemantics &S) {
  llvm::APFloat A(S, llvm::APInt(16, H));
  bool Lost;
  A.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &Lost);
  return A.convertToFloat();
}
uint16_t kiln::test::toHalf(float F) {
  return toSmall(F, llvm::APFloat::IEEEhalf());
}
float kiln::test::fromHalf(uint16_t H) {
  return fromSmall(H, llvm::APFloat::IEEEhalf());
}
uint16_t kiln::test::toBF16(float F) {
  return toSmall(F, llvm::APFloat::BFloat());
}
float kiln::test::fromBF16(uint16_t H) {
  return fromSmall(H, llvm::APFloat::BFloat());
}
