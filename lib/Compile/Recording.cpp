//===- Recording.cpp - What a compilation produced, for debugging --------===//

#include "kiln/Compile/Recording.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace llvm;

namespace kiln {

StringRef recordingFileName(RecordingKind Kind) {
  switch (Kind) {
  case RecordingKind::KernelIR:
    return "kernel.kiln";
  case RecordingKind::LLVMIR:
    return "lowered.ll";
  case RecordingKind::OptimizedLLVMIR:
    return "optimized.ll";
  case RecordingKind::Assembly:
    return "kernel.s";
  }
  llvm_unreachable("unknown recording kind");
}

const std::string &CompilationRecording::defaultDumpDir() {
  static const std::string Dir = [] {
    const char *D = std::getenv("KILN_DUMP");
    return std::string(D ? D : "");
  }();
  return Dir;
}

const std::vector<std::string> &CompilationRecording::defaultDumpAfter() {
  static const std::vector<std::string> Steps = [] {
    std::vector<std::string> S;
    const char *V = std::getenv("KILN_DUMP_AFTER");
    SmallVector<StringRef, 8> Parts;
    StringRef(V ? V : "").split(Parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef P : Parts)
      if (!P.trim().empty())
        S.push_back(P.trim().str());
    return S;
  }();
  return Steps;
}

void CompilationRecording::recordFile(StringRef FileName, StringRef Text) {
  if (!Enabled)
    return;
  for (auto &[Name, T] : Files)
    if (Name == FileName) {
      T += Text;
      return;
    }
  Files.emplace_back(FileName.str(), Text.str());
}

void CompilationRecording::record(RecordingKind Kind, std::string Text) {
  if (!Enabled)
    return;
  for (auto &[K, T] : Sections)
    if (K == Kind) {
      T = std::move(Text);
      return;
    }
  Sections.emplace_back(Kind, std::move(Text));
}

std::optional<StringRef> CompilationRecording::get(RecordingKind Kind) const {
  for (const auto &[K, T] : Sections)
    if (K == Kind)
      return StringRef(T);
  return std::nullopt;
}

Error CompilationRecording::writeTo(StringRef Dir,
                                    StringRef KernelIdText) const {
  std::string Safe = KernelIdText.str();
  for (char &C : Safe)
    if (!isAlnum(C) && C != '.' && C != '_' && C != '-')
      C = '_';
  if (Safe.empty() || Safe == "." || Safe == "..")
    Safe = "_" + Safe;
  SmallString<256> Folder(Dir);
  sys::path::append(Folder, Safe);
  if (std::error_code EC = sys::fs::create_directories(Folder))
    return createStringError(EC, "cannot create dump folder '%s': %s",
                             Folder.c_str(), EC.message().c_str());
  std::vector<std::pair<StringRef, StringRef>> All;
  for (const auto &[Kind, Text] : Sections)
    All.emplace_back(recordingFileName(Kind), Text);
  for (const auto &[Name, Text] : Files)
    All.emplace_back(Name, Text);
  for (const auto &[Name, Text] : All) {
    SmallString<256> Path(Folder);
    sys::path::append(Path, Name);
    std::error_code EC;
    raw_fd_ostream OS(Path, EC);
    if (!EC) {
      OS << Text;
      OS.close();
      EC = OS.error();
      // The failure is returned: left pending in the stream, it would make
      // its destructor end the process with an LLVM fatal error ("IO
      // failure on output stream").
      OS.clear_error();
    }
    if (EC)
      return createStringError(EC, "cannot write '%s': %s", Path.c_str(),
                               EC.message().c_str());
  }
  return Error::success();
}

Error CompilationRecording::dumpIfRequested(StringRef Dir,
                                            StringRef KernelIdText) const {
  if (Dir.empty() || (Sections.empty() && Files.empty()))
    return Error::success();
  return writeTo(Dir, KernelIdText);
}

} // namespace kiln
