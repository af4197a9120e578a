//===- FuzzTest.cpp - The parser survives any input -----------------------===//
//
// Random bytes, every prefix of a valid file and random token soups must give
// a module or a located diagnostic: never a crash, a hang or an exception.
// What is parsed must print and parse back to the same text.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"

#include "gtest/gtest.h"

#include <random>

using namespace kiln;

namespace {

const char *Valid = R"(kernel @reduce cube_dim(256) plane_dim(32) (%in: buffer<f32, read>, %out: buffer<f32, read_write>, %n: u32) {
  %s = shared f32[256]
  %acc = var f32
  set %acc, 0.0:f32
  %u = unit_pos : u32
  %i = absolute_pos.x : u32
  %ok = lt %i, %n : bool
  if %ok {
    %x = load %in[%i] : f32
    set %acc, %x
  } else {
    set %acc, -0.0:f32
  }
  %a = get %acc : f32
  store %s[%u], %a
  sync_cube
  for %k = 128:u32 to 0:u32 step 1:u32 {
    %v = const [1.0, 2.0] : vec<2 x f32>
    %e = extract %v[1] : f32
    sync_cube
  }
  %p = plane_sum %a : f32
  switch %u { case 0 { %old = atomic_add %out[0], %p : f32 } default { return } }
  loop { break }
}
)";

/// Parses \p Text; when it parses, checks the print/parse fixed point.
void check(llvm::StringRef Text) {
  llvm::Expected<Module> M = parseModule(Text, "fuzz.kiln");
  if (!M) {
    std::string Err = llvm::toString(M.takeError());
    EXPECT_EQ(Err.rfind("fuzz.kiln:", 0), 0u) << Err;
    EXPECT_NE(Err.find(": error: "), std::string::npos) << Err;
    return;
  }
  std::string Once = printModule(*M);
  llvm::Expected<Module> Again = parseModule(Once, "fuzz.kiln");
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError()) << "\n"
                           << Once;
  EXPECT_EQ(printModule(*Again), Once);
}

TEST(FuzzTest, ValidFileParses) {
  llvm::Expected<Module> M = parseModule(Valid, "fuzz.kiln");
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
}

TEST(FuzzTest, EveryPrefix) {
  std::string Text = Valid;
  for (size_t N = 0; N <= Text.size(); ++N)
    check(llvm::StringRef(Text).take_front(N));
}

TEST(FuzzTest, RandomBytes) {
  std::mt19937 Rng(1234);
  for (int Round = 0; Round < 2000; ++Round) {
    std::string Bytes(Rng() % 200, '\0');
    for (char &C : Bytes)
      C = static_cast<char>(Rng());
    check(Bytes);
  }
}

TEST(FuzzTest, MutatedValidFile) {
  std::mt19937 Rng(99);
  const std::string Alphabet = "%@{}[]()<>,:=x.-0123456789 \n";
  std::string Base = Valid;
  for (int Round = 0; Round < 3000; ++Round) {
    std::string Text = Base;
    for (int Edit = 0, E = 1 + Rng() % 4; Edit < E; ++Edit) {
      size_t At = Rng() % Text.size();
      switch (Rng() % 3) {
      case 0:
        Text.erase(At, 1 + Rng() % 8);
        break;
      case 1:
        Text.insert(At, 1, Alphabet[Rng() % Alphabet.size()]);
        break;
      default:
        Text[At] = Alphabet[Rng() % Alphabet.size()];
        break;
      }
      if (Text.empty())
        Text = "k";
    }
    check(Text);
  }
}

TEST(FuzzTest, TokenSoup) {
  // Sequences of real tokens reach deeper into the grammar than bytes do.
  const char *Tokens[] = {
      "kernel", "@k", "cube_dim", "(", ")", "{", "}", "[", "]", "<", ">",
      ",", ":", "=", "%a", "%b", "%i", "u32", "f32", "vec", "4", "x",
      "buffer", "read", "write", "plane_dim", "32", "1", "-2", "2.5", "nan",
      "0x7fc00001", "true", "if", "else", "for", "to", "step", "loop",
      "switch", "case", "default", "break", "return", "sync_cube", "add",
      "load", "store", "const", "var", "shared", "set", "get", "unit_pos.x",
      "extract", "insert", "atomic_cas", "plane_sum", "\n", "// c\n"};
  std::mt19937 Rng(7);
  std::string Prefix = "kernel @k cube_dim(4) (%a: buffer<f32, read_write>, "
                       "%i: u32) {\n";
  for (int Round = 0; Round < 5000; ++Round) {
    std::string Text = Round % 2 ? Prefix : "";
    for (int T = 0, N = Rng() % 40; T < N; ++T) {
      Text += Tokens[Rng() % std::size(Tokens)];
      Text += ' ';
    }
    check(Text);
  }
}

TEST(FuzzTest, HugeNumbersAndDepth) {
  check("kernel @k cube_dim(99999999999999999999999999) () {}");
  check("kernel @k cube_dim(1) () { %x = const " + std::string(5000, '9') +
        " : f64 }");
  check("kernel @k cube_dim(1) () { %x = const 1e999999999999999999 : f32 }");
  check("kernel @k cube_dim(1) () { %x = shared f32[" +
        std::string(30, '9') + "] }");
  std::string Deep = "kernel @k cube_dim(1) () {";
  for (int I = 0; I < 255; ++I)
    Deep += "loop {";
  for (int I = 0; I < 255; ++I)
    Deep += "}";
  Deep += "}";
  llvm::Expected<Module> M = parseModule(Deep, "fuzz.kiln");
  EXPECT_TRUE(bool(M)) << llvm::toString(M.takeError());
  check(Deep);
  std::string Switches = "kernel @k cube_dim(1) (%s: i32) {";
  for (int I = 0; I < 10000; ++I)
    Switches += "switch %s {";
  check(Switches);
}

} // namespace
