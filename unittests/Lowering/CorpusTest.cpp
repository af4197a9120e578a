//===- CorpusTest.cpp - Every valid kernel the project ships lowers and links
//===//
//
// Lowers every kernel of the repository's valid .kiln files (IR round-trip
// tests, verifier positives, conformance and benchmark kernels, the
// foreign-kernel corpus, examples) in both variants, checks the module with
// llvm::verifyModule and generates host code for it through LLJIT, so that
// every operation reaches instruction selection. With KILN_LOWERING_DUMP=<dir>
// the lowered modules are written there.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"
#include "kiln/CPU/Lowering.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <mutex>

using namespace kiln;

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> Files;
  for (const char *Dir : {"test/IR", "test/Verifier", "test/Conformance",
                          "bench/kernels", "examples/kernels"}) {
    llvm::SmallString<256> Path(KILN_SOURCE_DIR);
    llvm::sys::path::append(Path, Dir);
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Path, EC), End; It != End && !EC;
         It.increment(EC))
      if (llvm::sys::path::extension(It->path()) == ".kiln")
        Files.push_back(It->path());
  }
  // The foreign-kernel corpus: one folder a benchmark.
  llvm::SmallString<256> Foreign(KILN_SOURCE_DIR);
  llvm::sys::path::append(Foreign, "bench", "corpus");
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Foreign, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".kiln")
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

TEST(LoweringCorpus, EveryShippedKernelLowersVerifiesAndLinks) {
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  const char *Dump = std::getenv("KILN_LOWERING_DUMP");
  DeviceLimits Limits;
  size_t Lowered = 0;
  for (const std::string &File : corpus()) {
    auto Buf = llvm::MemoryBuffer::getFile(File);
    ASSERT_TRUE(Buf) << File;
    auto Mod = parseModule((*Buf)->getBuffer(), File);
    if (!Mod) {
      ADD_FAILURE() << llvm::toString(Mod.takeError());
      continue;
    }
    for (const IRKernel &K : Mod->Kernels) {
      if (llvm::Error E = verifyKernel(K, Limits, File)) {
        // Some files hold kernels for another plane size (a verifier test).
        llvm::consumeError(std::move(E));
        continue;
      }
      for (bool Checked : {true, false}) {
        auto Ctx = std::make_unique<llvm::LLVMContext>();
        auto L = lowerKernel(K, CpuVariant{Checked, 32}, Limits, *Ctx);
        if (!L) {
          ADD_FAILURE() << File << " @" << K.Name << ": "
                        << llvm::toString(L.takeError());
          continue;
        }
        std::string Problems;
        llvm::raw_string_ostream OS(Problems);
        EXPECT_FALSE(llvm::verifyModule(*L->Module, &OS))
            << File << " @" << K.Name << Problems;
        EXPECT_EQ(L->Metadata.Symbol, "kiln_cube_" + K.Name);
        EXPECT_EQ(L->Metadata.ScratchBytes % 64, 0u);
        if (Dump) {
          std::error_code EC;
          llvm::raw_fd_ostream Out(
              std::string(Dump) + "/" + K.Name +
                  (Checked ? ".checked.ll" : ".unchecked.ll"),
              EC);
          if (!EC)
            L->Module->print(Out, nullptr);
        }
        auto JIT = llvm::orc::LLJITBuilder().create();
        ASSERT_TRUE(!!JIT) << llvm::toString(JIT.takeError());
        auto Gen =
            llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                (*JIT)->getDataLayout().getGlobalPrefix());
        ASSERT_TRUE(!!Gen);
        (*JIT)->getMainJITDylib().addGenerator(std::move(*Gen));
        if (llvm::Error E = kiln::test::defineRuntimeSymbols(**JIT)) {
          ADD_FAILURE() << llvm::toString(std::move(E));
          continue;
        }
        ASSERT_FALSE((*JIT)->addIRModule(
            llvm::orc::ThreadSafeModule(std::move(L->Module), std::move(Ctx))));
        auto Sym = (*JIT)->lookup(L->Metadata.Symbol);
        EXPECT_TRUE(!!Sym) << File << " @" << K.Name;
        if (!Sym)
          llvm::consumeError(Sym.takeError());
        ++Lowered;
      }
    }
  }
  EXPECT_GT(Lowered, 20u);
}

} // namespace
