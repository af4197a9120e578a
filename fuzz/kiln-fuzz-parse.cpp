//===- kiln-fuzz-parse.cpp - Fuzz the IR parser, verifier and printer -----===//
//
// kiln-fuzz-parse: any bytes as a `.kiln` file (docs/LangRef.md §4).
//
//   - parseModule must give a module or one located diagnostic
//     ("FILE:LINE:COL: error: ..."), never crash, hang or recurse without
//     bound (§4.8);
//   - any module it gives prints, and the printed text parses back to a
//     module that prints identically (the fixed point of §8);
//   - verifyModule must accept or give diagnostics of the form of §6.1;
//   - a module that verifies still verifies once printed and parsed again,
//     with the same kernel ids (§9.1).
//
// A broken promise aborts with "kiln fuzz finding: ...". Seeds: every .kiln
// of the repository (utils/fuzz-seeds.sh); dictionary: fuzz/kiln.dict.
// Run it with utils/fuzz.sh kiln-fuzz-parse SECONDS.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace kiln;
using kiln::fuzz::finding;

namespace {

constexpr const char *FileName = "fuzz.kiln";

/// Every line of \p Message starts with "fuzz.kiln:" and holds ": error: ".
void checkDiagnosticText(llvm::StringRef Message, llvm::StringRef What) {
  if (Message.empty())
    finding(What + " gave an empty diagnostic");
  llvm::SmallVector<llvm::StringRef, 8> Lines;
  Message.split(Lines, '\n');
  for (llvm::StringRef Line : Lines)
    if (!Line.starts_with(FileName) || !Line.contains(": error: "))
      finding(What +
              " gave a diagnostic line not of the form "
              "'FILE:...: error: MESSAGE': '" +
              Line + "'");
}

std::vector<uint64_t> kernelIds(const Module &M) {
  std::vector<uint64_t> Ids;
  for (const IRKernel &K : M.Kernels)
    Ids.push_back(hashKernel(K));
  return Ids;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::abortOnLLVMFatalErrors();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  llvm::Expected<Module> M = parseModule(Text, FileName);
  if (!M) {
    std::string Message = llvm::toString(M.takeError());
    checkDiagnosticText(Message, "parseModule");
    if (llvm::StringRef(Message).contains('\n'))
      finding("parseModule gave more than one diagnostic: " + Message);
    return 0;
  }

  // The fixed point of docs/LangRef.md §8, verified or not.
  std::string Once = printModule(*M);
  llvm::Expected<Module> Again = parseModule(Once, FileName);
  if (!Again)
    finding("the printed module does not parse: " +
            llvm::toString(Again.takeError()) + "\n--- printed:\n" + Once);
  std::string Twice = printModule(*Again);
  if (Twice != Once)
    finding("print(parse(print(M))) differs from print(M)\n--- once:\n" + Once +
            "--- twice:\n" + Twice);
  if (kernelIds(*M) != kernelIds(*Again))
    finding("kernel ids changed through print and parse\n" + Once);

  // The printed form says everything the verifier looks at: both verify,
  // or neither does.
  DeviceLimits Limits;
  llvm::Error E = verifyModule(*M, Limits);
  llvm::Error E2 = verifyModule(*Again, Limits);
  bool Verifies = !E, VerifiesAgain = !E2;
  if (E)
    checkDiagnosticText(llvm::toString(std::move(E)), "verifyModule");
  if (E2)
    checkDiagnosticText(llvm::toString(std::move(E2)), "verifyModule");
  if (Verifies != VerifiesAgain)
    finding(llvm::Twine("the module ") +
            (Verifies ? "verifies" : "does not verify") +
            " but its printed form " + (VerifiesAgain ? "does" : "does not") +
            "\n--- printed:\n" + Once);
  return 0;
}
