//===- Plan.cpp - Multi-launch plans for kiln-run -------------------------===//

#include "support/Plan.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/Runtime/Collective.h"
#include "support/HostQueue.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

using namespace kiln;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

namespace {

/// Deepest nesting of loops, and of parentheses in an expression: far above
/// any real plan, low enough that the recursive parser and evaluator never
/// run out of stack.
constexpr unsigned MaxBlockDepth = 64;
constexpr unsigned MaxExprDepth = 256;
/// Most operations on one path of an expression's tree (`1 + 1 + ...`
/// nests to the left without parentheses), which the evaluator recurses
/// through.
constexpr unsigned MaxExprHeight = 1000;

/// Names that cannot be given to a kernel, a buffer or a variable.
bool isReserved(StringRef Name) {
  return llvm::is_contained({"kernel", "buffer", "let", "for", "to", "step",
                             "repeat", "launch", "swap", "set", "while",
                             "cubes", "min", "max", "true", "false", "inf",
                             "nan"},
                            Name);
}

/// A plan's names are those of the IR's values and kernels that do not
/// start with a digit: letters, digits, '_' and '.'.
bool isNameStart(char C) { return llvm::isAlpha(C) || C == '_'; }
bool isNameChar(char C) { return llvm::isAlnum(C) || C == '_' || C == '.'; }

/// A kernel's name in the IR (after '@').
bool isKernelName(StringRef S) {
  return !S.empty() && llvm::all_of(S, isNameChar);
}

struct Token {
  enum Kind { Name, Int, Float, BadNumber, String, Punct, End };
  Kind K = End;
  StringRef Text; ///< a String's contents, without the quotes
  SourceLoc Loc;
  bool is(StringRef P) const { return K == Punct && Text == P; }
  bool isName(StringRef N) const { return K == Name && Text == N; }
};

enum class ExprOp { Int, Var, Add, Sub, Mul, Div, Rem, Neg, Min, Max };

struct Expr {
  ExprOp Op = ExprOp::Int;
  int64_t Value = 0; ///< Int
  unsigned Slot = 0; ///< Var
  SourceLoc Loc;     ///< of the operator (or the operand itself)
  SourceLoc Begin;   ///< of the expression's first token
  unsigned Height = 1;
  std::vector<unsigned> Args;
};

struct Stmt {
  enum Kind {
    Let, For, Repeat, Launch, Swap, Buffer, Set, While,
    // The host side (docs/Tools.md §3.7).
    On, Record, Wait, Sync, Copy, Read, AllReduce
  };
  Kind K = Let;
  SourceLoc Loc;
  /// The stream its work is queued on (0: the plan's own).
  unsigned Stream = 0;
  unsigned Slot = 0;            ///< Let, For: the variable
  unsigned A = 0, B = 0, C = 0; ///< expressions (see parse)
  bool HasStep = false;         ///< For
  /// Launch: its index; Swap, Buffer, Set, While: buffers (Set: X, its
  /// value Y in Sets); Record, Wait: the event X; Copy: buffers X (into)
  /// and Y (from); Read: the buffer X; AllReduce: its index X.
  unsigned X = 0, Y = 0;
  std::vector<Stmt> Body; ///< For, Repeat, While, On
};

/// One NAME=VALUE of a launch statement.
struct LaunchArg {
  enum Kind { ExprValue, Literal, BufferName };
  std::string Name;
  SourceLoc NameLoc, ValueLoc;
  Kind K = ExprValue;
  unsigned Index = 0; ///< the expression or the buffer
  std::string Text;   ///< a Literal
};

/// What a launch gives parameter I, once bound.
struct BoundParam {
  bool IsBuffer = false;
  unsigned Buffer = 0;
  std::optional<unsigned> ExprIdx; ///< a value computed at each launch
  std::vector<uint8_t> Bytes;      ///< a constant value
  Type Ty;
  std::string Name;
  SourceLoc Loc;
};

struct LaunchStmt {
  unsigned Kernel = 0;
  SourceLoc Loc;
  unsigned Stream = 0;
  /// cubes=indirect(BUFFER[, INDEX]): the buffer, the index's expression.
  std::optional<unsigned> IndirectBuffer, IndirectIndex;
  SourceLoc IndirectLoc;
  std::vector<unsigned> Cubes;
  std::vector<LaunchArg> Args;
  std::vector<BoundParam> Params;
  std::vector<ArgBinding> Bindings;
};

/// The value of a `set` statement: an expression or constant bytes.
struct SetValue {
  std::optional<unsigned> ExprIdx;
  std::vector<uint8_t> Bytes;
  SourceLoc Loc;
};

struct BufferDecl {
  std::string Name;
  SourceLoc Loc, SpecLoc;
  std::string TypeText; ///< before '['
  unsigned CountExpr = 0;
  std::string Rest; ///< from ']' on, a relative file= resolved
  Type ElementType;
  bool HasShape = false, HasBox = false, HasIm2col = false;
  bool Created = false;
  HostBuffer Storage;
  ArgBinding Binding;
};

/// A `stream NAME [= DEVICE]` statement (index 0: the plan's own stream).
struct StreamDecl {
  std::string Name;
  unsigned Device = 0;
};

/// An `allreduce OP STREAM=BUFFER ...` statement.
struct AllReduceStmt {
  AllReduceOp Op = AllReduceOp::Sum;
  std::vector<unsigned> Streams, Buffers;
  std::vector<SourceLoc> BufferLocs;
};

/// What a `read` statement read back.
struct ReadSnapshot {
  std::string Name;
  HostBuffer Contents;
};

struct Symbol {
  enum Kind { Kernel, Buffer, Var, LoopVar, Device, Stream, Event };
  Kind K = Var;
  unsigned Index = 0;
  SourceLoc Loc;
};

const char *kindText(Symbol::Kind K) {
  switch (K) {
  case Symbol::Kernel:
    return "a kernel";
  case Symbol::Buffer:
    return "a buffer";
  case Symbol::Var:
    return "a variable";
  case Symbol::LoopVar:
    return "a loop variable";
  case Symbol::Device:
    return "a device";
  case Symbol::Stream:
    return "a stream";
  case Symbol::Event:
    return "an event";
  }
  return "";
}

} // namespace

struct Plan::Impl {
  std::string FileName;
  std::string Folder; ///< relative paths are taken from here ("" = cwd)
  std::vector<PlanKernel> Kernels;
  std::vector<BufferDecl> Buffers;
  std::vector<LaunchStmt> Launches;
  std::vector<SetValue> Sets;
  std::vector<Expr> Exprs;
  std::vector<Stmt> Top;
  unsigned SlotCount = 0;
  bool Bound = false;
  // The host side: devices (0: the plan's first), streams (0: the plan's
  // own, on device 0), events, all-reduce statements.
  std::vector<std::string> DeviceNames{""};
  std::vector<StreamDecl> Streams{StreamDecl()};
  std::vector<std::string> EventNames;
  std::vector<AllReduceStmt> AllReduces;

  // Run state.
  std::vector<int64_t> Slots;
  std::vector<unsigned> Names; ///< buffer name -> the buffer it names
  uint64_t Steps = 0;
  bool HasRun = false;
  /// The check run: buffers are created but neither written by `set` nor
  /// read by `while`, whose body is checked once.
  bool Checking = false;
  /// The check run has met a `while`: from there on what it computes may
  /// depend on the number of the loop's iterations, which only the run
  /// knows, so its errors are left for the run to find.
  bool Unsure = false;
  /// Each event's last record in this run (null: none yet); Recorded says
  /// the same in the check run, which queues nothing.
  std::vector<std::shared_ptr<HostEvent>> EventPoints;
  std::vector<bool> Recorded;
  std::vector<std::unique_ptr<ReadSnapshot>> Reads;
  /// One per stream, made by the first run; destroyed first (they finish
  /// their work on the buffers above).
  std::vector<std::unique_ptr<HostQueue>> Queues;

  // Parse state.
  std::vector<llvm::StringMap<Symbol>> Scopes;
  unsigned ElementExpr = 0; ///< the index parseElement parsed last
  std::optional<SourceLoc> FirstWhile;
  /// The stream of each open block (the plan's own at the top level).
  std::vector<unsigned> BlockStreams{0};

  Error error(SourceLoc Loc, const Twine &Message) const {
    return makeDiagnostic(FileName, Loc, Message);
  }

  // ---- lexing ----------------------------------------------------------

  /// The tokens of \p Text, which starts at column \p Col of line \p Line;
  /// a '#' ends it (a comment). The last token is End.
  Expected<std::vector<Token>> lex(StringRef Text, unsigned Line,
                                   unsigned Col) const {
    std::vector<Token> Toks;
    size_t I = 0;
    auto Loc = [&](size_t At) {
      return SourceLoc{Line, static_cast<uint32_t>(Col + At)};
    };
    while (I < Text.size()) {
      char C = Text[I];
      if (C == ' ' || C == '\t' || C == '\r') {
        ++I;
        continue;
      }
      if (C == '#')
        break;
      Token T;
      T.Loc = Loc(I);
      size_t Start = I;
      if (isNameStart(C)) {
        while (I < Text.size() && isNameChar(Text[I]))
          ++I;
        T.K = Token::Name;
        T.Text = Text.slice(Start, I);
      } else if (llvm::isDigit(C)) {
        // Everything that could belong to a number, so that "12ab" is one
        // bad number rather than 12 followed by a name.
        while (I < Text.size()) {
          char D = Text[I];
          if (isNameChar(D)) {
            ++I;
            continue;
          }
          if ((D == '+' || D == '-') &&
              (Text[I - 1] == 'e' || Text[I - 1] == 'E') &&
              !Text.slice(Start, I).contains_insensitive("x")) {
            ++I;
            continue;
          }
          break;
        }
        T.Text = Text.slice(Start, I);
        T.K = llvm::all_of(T.Text, llvm::isDigit) ? Token::Int
              : isFloatText(T.Text)               ? Token::Float
                                                  : Token::BadNumber;
      } else if (C == '"') {
        size_t Close = Text.find('"', I + 1);
        if (Close == StringRef::npos)
          return error(T.Loc, "unterminated string: a '\"' opens it but "
                              "none closes it on this line");
        T.K = Token::String;
        T.Text = Text.slice(I + 1, Close);
        I = Close + 1;
      } else if (StringRef("={}()[],+-*/%!\\").contains(C)) {
        T.K = Token::Punct;
        T.Text = Text.substr(I, 1);
        ++I;
      } else {
        std::string Shown = llvm::isPrint(C)
                                ? std::string(1, C)
                                : "\\x" + llvm::utohexstr(uint8_t(C), true, 2);
        return error(T.Loc, "unexpected character '" + Shown + "'");
      }
      Toks.push_back(T);
    }
    Token EndTok;
    EndTok.Loc = Loc(I);
    Toks.push_back(EndTok);
    return Toks;
  }

  /// DIGITS[.DIGITS][(e|E)[+|-]DIGITS], or DIGITS. (a float literal).
  static bool isFloatText(StringRef T) {
    size_t I = 0;
    auto Digits = [&] {
      size_t Start = I;
      while (I < T.size() && llvm::isDigit(T[I]))
        ++I;
      return I > Start;
    };
    if (!Digits())
      return false;
    bool Float = false;
    if (I < T.size() && T[I] == '.') {
      ++I;
      Digits();
      Float = true;
    }
    if (I < T.size() && (T[I] == 'e' || T[I] == 'E')) {
      ++I;
      if (I < T.size() && (T[I] == '+' || T[I] == '-'))
        ++I;
      if (!Digits())
        return false;
      Float = true;
    }
    return Float && I == T.size();
  }

  // ---- names -----------------------------------------------------------

  const Symbol *lookup(StringRef Name) const {
    for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It) {
      auto Found = It->find(Name);
      if (Found != It->end())
        return &Found->second;
    }
    return nullptr;
  }

  /// Declares \p Name in the innermost scope.
  Error declare(const Token &Name, Symbol S) {
    if (Name.K != Token::Name)
      return error(Name.Loc, "expected a name, found " + describe(Name));
    if (isReserved(Name.Text))
      return error(Name.Loc, "'" + Name.Text + "' is a reserved word");
    if (const Symbol *Old = lookup(Name.Text))
      return error(Name.Loc, "'" + Name.Text + "' is already " +
                                 kindText(Old->K) + " (defined at " +
                                 formatLoc(Old->Loc) + ")");
    S.Loc = Name.Loc;
    Scopes.back()[Name.Text] = S;
    return Error::success();
  }

  static std::string describe(const Token &T) {
    switch (T.K) {
    case Token::End:
      return "the end of the line";
    case Token::String:
      return (Twine("\"") + T.Text + "\"").str();
    default:
      return (Twine("'") + T.Text + "'").str();
    }
  }

  // ---- expressions -----------------------------------------------------

  struct Cursor {
    const std::vector<Token> &Toks;
    size_t I = 0;
    const Token &peek(size_t Ahead = 0) const {
      return Toks[std::min(I + Ahead, Toks.size() - 1)];
    }
    const Token &next() {
      const Token &T = peek();
      if (I < Toks.size() - 1)
        ++I;
      return T;
    }
  };

  unsigned addExpr(Expr E) {
    E.Begin = E.Loc;
    for (unsigned A : E.Args)
      E.Height = std::max(E.Height, Exprs[A].Height + 1);
    // A binary operation begins where its left operand does.
    if (E.Op != ExprOp::Neg && E.Op != ExprOp::Min && E.Op != ExprOp::Max &&
        !E.Args.empty())
      E.Begin = Exprs[E.Args[0]].Begin;
    Exprs.push_back(std::move(E));
    return static_cast<unsigned>(Exprs.size() - 1);
  }

  Expected<unsigned> parseExpr(Cursor &C, unsigned Depth = 0) {
    auto E = parseSum(C, Depth);
    if (E && Exprs[*E].Height > MaxExprHeight)
      return error(Exprs[*E].Begin, "expression of more than " +
                                        Twine(MaxExprHeight) +
                                        " nested operations");
    return E;
  }

  Expected<unsigned> parseSum(Cursor &C, unsigned Depth) {
    if (Depth > MaxExprDepth)
      return error(C.peek().Loc, "expression nested more than " +
                                     Twine(MaxExprDepth) + " deep");
    auto L = parseTerm(C, Depth);
    if (!L)
      return L.takeError();
    unsigned Left = *L;
    while (C.peek().is("+") || C.peek().is("-")) {
      const Token &Op = C.next();
      auto R = parseTerm(C, Depth);
      if (!R)
        return R.takeError();
      Expr E;
      E.Op = Op.Text == "+" ? ExprOp::Add : ExprOp::Sub;
      E.Loc = Op.Loc;
      E.Args = {Left, *R};
      Left = addExpr(std::move(E));
    }
    return Left;
  }

  Expected<unsigned> parseTerm(Cursor &C, unsigned Depth) {
    auto L = parseUnary(C, Depth);
    if (!L)
      return L.takeError();
    unsigned Left = *L;
    while (C.peek().is("*") || C.peek().is("/") || C.peek().is("%")) {
      const Token &Op = C.next();
      auto R = parseUnary(C, Depth);
      if (!R)
        return R.takeError();
      Expr E;
      E.Op = Op.Text == "*"   ? ExprOp::Mul
             : Op.Text == "/" ? ExprOp::Div
                              : ExprOp::Rem;
      E.Loc = Op.Loc;
      E.Args = {Left, *R};
      Left = addExpr(std::move(E));
    }
    return Left;
  }

  Expected<unsigned> parseUnary(Cursor &C, unsigned Depth) {
    if (Depth > MaxExprDepth)
      return error(C.peek().Loc, "expression nested more than " +
                                     Twine(MaxExprDepth) + " deep");
    if (C.peek().is("-")) {
      const Token &Op = C.next();
      auto Operand = parseUnary(C, Depth + 1);
      if (!Operand)
        return Operand.takeError();
      Expr E;
      E.Op = ExprOp::Neg;
      E.Loc = Op.Loc;
      E.Args = {*Operand};
      return addExpr(std::move(E));
    }
    return parsePrimary(C, Depth);
  }

  Expected<unsigned> parsePrimary(Cursor &C, unsigned Depth) {
    const Token &T = C.next();
    Expr E;
    E.Loc = T.Loc;
    switch (T.K) {
    case Token::Int: {
      uint64_t V;
      if (T.Text.getAsInteger(10, V) ||
          V > uint64_t(std::numeric_limits<int64_t>::max()))
        return error(T.Loc, "integer " + T.Text +
                                " does not fit a 64-bit signed integer");
      E.Op = ExprOp::Int;
      E.Value = static_cast<int64_t>(V);
      return addExpr(std::move(E));
    }
    case Token::Float:
      return error(T.Loc, "a float literal (" + T.Text +
                              ") cannot be part of an expression: host "
                              "arithmetic is on integers; give a float "
                              "parameter the literal alone");
    case Token::BadNumber:
      return error(T.Loc, "bad number '" + T.Text +
                              "': expressions take decimal integers (quote "
                              "a literal such as \"0x3f800000\")");
    case Token::Name: {
      if (T.Text == "min" || T.Text == "max") {
        E.Op = T.Text == "min" ? ExprOp::Min : ExprOp::Max;
        if (!C.next().is("("))
          return error(T.Loc, T.Text +
                                  " needs its arguments in "
                                  "parentheses: " +
                                  T.Text + "(A, B, ...)");
        for (;;) {
          auto A = parseExpr(C, Depth + 1);
          if (!A)
            return A.takeError();
          E.Args.push_back(*A);
          const Token &Sep = C.next();
          if (Sep.is(")"))
            break;
          if (!Sep.is(","))
            return error(Sep.Loc, "expected ',' or ')' in " + T.Text +
                                      "(...), found " + describe(Sep));
        }
        if (E.Args.size() < 2)
          return error(T.Loc, T.Text + "(...) needs at least two arguments");
        return addExpr(std::move(E));
      }
      const Symbol *S = lookup(T.Text);
      if (!S)
        return error(T.Loc, "unknown name '" + T.Text + "'");
      if (S->K != Symbol::Var && S->K != Symbol::LoopVar)
        return error(T.Loc, "'" + T.Text + "' is " + kindText(S->K) +
                                ", not a number (defined at " +
                                formatLoc(S->Loc) + ")");
      E.Op = ExprOp::Var;
      E.Slot = S->Index;
      return addExpr(std::move(E));
    }
    default:
      break;
    }
    if (T.is("(")) {
      auto Inner = parseExpr(C, Depth + 1);
      if (!Inner)
        return Inner.takeError();
      const Token &Close = C.next();
      if (!Close.is(")"))
        return error(Close.Loc, "expected ')' to close the '(' at " +
                                    formatLoc(T.Loc) + ", found " +
                                    describe(Close));
      return *Inner;
    }
    return error(T.Loc, "expected an expression, found " + describe(T));
  }

  /// Parses an expression that must end the line (or be followed by
  /// \p Then, which is then consumed).
  Expected<unsigned> parseExprThen(Cursor &C, StringRef Then = "") {
    auto E = parseExpr(C);
    if (!E)
      return E.takeError();
    const Token &T = C.peek();
    if (Then.empty() ? T.K != Token::End : !(T.isName(Then) || T.is(Then)))
      return error(T.Loc, "expected " +
                              (Then.empty() ? Twine("the end of the line")
                                            : "'" + Then + "'") +
                              " after the expression, found " + describe(T));
    return E;
  }

  // ---- evaluation --------------------------------------------------------

  Expected<int64_t> eval(unsigned Idx) const {
    const Expr &E = Exprs[Idx];
    auto Operand = [&](unsigned I) { return eval(E.Args[I]); };
    switch (E.Op) {
    case ExprOp::Int:
      return E.Value;
    case ExprOp::Var:
      return Slots[E.Slot];
    case ExprOp::Neg: {
      auto V = Operand(0);
      if (!V)
        return V.takeError();
      if (*V == std::numeric_limits<int64_t>::min())
        return error(E.Loc, "overflow: -(" + Twine(*V) +
                                ") does not fit a 64-bit signed integer");
      return -*V;
    }
    case ExprOp::Min:
    case ExprOp::Max: {
      std::optional<int64_t> R;
      for (unsigned I = 0; I < E.Args.size(); ++I) {
        auto V = Operand(I);
        if (!V)
          return V.takeError();
        if (!R || (E.Op == ExprOp::Min ? *V < *R : *V > *R))
          R = *V;
      }
      return *R;
    }
    default:
      break;
    }
    auto L = Operand(0);
    if (!L)
      return L.takeError();
    auto R = Operand(1);
    if (!R)
      return R.takeError();
    int64_t Out = 0;
    const char *OpText = "";
    bool Overflow = false;
    switch (E.Op) {
    case ExprOp::Add:
      OpText = "+";
      Overflow = __builtin_add_overflow(*L, *R, &Out);
      break;
    case ExprOp::Sub:
      OpText = "-";
      Overflow = __builtin_sub_overflow(*L, *R, &Out);
      break;
    case ExprOp::Mul:
      OpText = "*";
      Overflow = __builtin_mul_overflow(*L, *R, &Out);
      break;
    case ExprOp::Div:
    case ExprOp::Rem:
      OpText = E.Op == ExprOp::Div ? "/" : "%";
      if (*R == 0)
        return error(E.Loc,
                     Twine(E.Op == ExprOp::Div ? "division" : "remainder") +
                         " by zero: " + Twine(*L) + " " + OpText + " 0");
      // INT64_MIN / -1 overflows; INT64_MIN % -1 is 0 but traps in C.
      if (*L == std::numeric_limits<int64_t>::min() && *R == -1) {
        if (E.Op == ExprOp::Rem)
          return 0;
        Overflow = true;
        break;
      }
      Out = E.Op == ExprOp::Div ? *L / *R : *L % *R;
      break;
    default:
      llvm_unreachable("not a binary operator");
    }
    if (Overflow)
      return error(E.Loc, "overflow: " + Twine(*L) + " " + OpText + " " +
                              Twine(*R) +
                              " does not fit a 64-bit signed integer");
    return Out;
  }

  // ---- statements --------------------------------------------------------

  Error parseText(StringRef Text);
  Error parseStatement(Cursor &C, StringRef Line, unsigned LineNo,
                       std::vector<std::vector<Stmt> *> &Blocks,
                       std::vector<SourceLoc> &Opens);
  /// The next token of \p C, which must be `=`: else an error "expected
  /// '=' after AFTER, found ... (USAGE)".
  Expected<const Token *> expectEquals(Cursor &C, StringRef After,
                                       StringRef Usage) const;
  Error parseKernel(const Token &Kw, Cursor &C, StringRef Line);
  Error parseBuffer(const Token &Kw, Cursor &C, StringRef Line,
                    std::vector<Stmt> &Into);
  Error parseLaunch(const Token &Kw, Cursor &C, std::vector<Stmt> &Into);
  Error parseValue(Cursor &C, LaunchArg &A);
  /// A name of kind \p Want: its index.
  Expected<unsigned> parseNameOf(Cursor &C, Symbol::Kind Want,
                                 StringRef Usage);
  Error parseHostStatement(const Token &Kw, Cursor &C,
                           std::vector<std::vector<Stmt> *> &Blocks,
                           std::vector<SourceLoc> &Opens, bool &Handled);
  Error parseIndirect(Cursor &C, LaunchStmt &L);
  Error execHost(const Stmt &S,
                 llvm::function_ref<Error(const PlanLaunch &)> Launch);
  /// Waits for every stream; the first failure among them.
  Error syncAll();
  Expected<unsigned> parseElement(Cursor &C, StringRef Form);
  Expected<uint64_t> elementIndex(const Stmt &S);

  Error exec(const std::vector<Stmt> &Body,
             llvm::function_ref<Error(const PlanLaunch &)> Launch);
  Error execOne(const Stmt &S,
                llvm::function_ref<Error(const PlanLaunch &)> Launch);
  Error execStatement(const Stmt &S,
                      llvm::function_ref<Error(const PlanLaunch &)> Launch);
  Error createBuffer(BufferDecl &B);
  Error launch(const Stmt &S,
               llvm::function_ref<Error(const PlanLaunch &)> Launch);
};

/// The raw text of \p Line after token \p After (trimmed, without a
/// comment), and the column it starts at.
static std::pair<StringRef, unsigned> restOfLine(StringRef Line,
                                                 const Token &After) {
  size_t From = After.Loc.Col - 1 + After.Text.size();
  StringRef Rest = Line.drop_front(std::min(From, Line.size()));
  Rest = Rest.take_until([](char C) { return C == '#'; });
  size_t Lead = Rest.size() - Rest.ltrim().size();
  return {Rest.trim(), static_cast<unsigned>(From + Lead + 1)};
}

Expected<const Token *> Plan::Impl::expectEquals(Cursor &C, StringRef After,
                                                 StringRef Usage) const {
  const Token &Eq = C.next();
  if (!Eq.is("="))
    return error(Eq.Loc, "expected '=' after " + After + ", found " +
                             describe(Eq) + " (" + Usage + ")");
  return &Eq;
}

Error Plan::Impl::parseKernel(const Token &Kw, Cursor &C, StringRef Line) {
  const Token &Name = C.next();
  if (Error E = declare(
          Name, {Symbol::Kernel, static_cast<unsigned>(Kernels.size()), {}}))
    return E;
  auto EqOr =
      expectEquals(C, "the kernel's name", "kernel NAME = PATH[:KERNEL]");
  if (!EqOr)
    return EqOr.takeError();
  const Token &Eq = **EqOr;
  auto [Text, Col] = restOfLine(Line, Eq);
  SourceLoc PathLoc{Kw.Loc.Line, Col};
  if (Text.empty())
    return error(PathLoc, "expected the path of a .kiln file after '=' "
                          "(kernel NAME = PATH[:KERNEL])");
  PlanKernel K;
  K.Name = Name.Text.str();
  K.Loc = Kw.Loc;
  K.PathLoc = PathLoc;
  K.Kernel = K.Name;
  auto Resolve = [&](StringRef Path) {
    if (Folder.empty() || llvm::sys::path::is_absolute(Path))
      return Path.str();
    llvm::SmallString<256> Joined(Folder);
    llvm::sys::path::append(Joined, Path);
    return Joined.str().str();
  };
  K.Path = Text.str();
  K.File = Resolve(K.Path);
  // A path that names an existing file is taken whole, colons and all;
  // otherwise a last ':' starts the kernel's name.
  size_t Colon = Text.rfind(':');
  llvm::sys::fs::file_status Status;
  bool WholeFile = !llvm::sys::fs::status(K.File, Status) &&
                   Status.type() != llvm::sys::fs::file_type::directory_file;
  if (Colon != StringRef::npos && !WholeFile) {
    StringRef After = Text.drop_front(Colon + 1).trim();
    After.consume_front("@");
    if (!isKernelName(After))
      return error(SourceLoc{Kw.Loc.Line, Col + unsigned(Colon) + 1},
                   "bad kernel name '" + Text.drop_front(Colon + 1) +
                       "' after ':' (kernel NAME = PATH[:KERNEL])");
    K.Kernel = After.str();
    K.Path = Text.take_front(Colon).rtrim().str();
    if (K.Path.empty())
      return error(PathLoc, "empty path before ':'");
    K.File = Resolve(K.Path);
  }
  Kernels.push_back(std::move(K));
  return Error::success();
}

Error Plan::Impl::parseBuffer(const Token &Kw, Cursor &C, StringRef Line,
                              std::vector<Stmt> &Into) {
  const Token &Name = C.next();
  if (Error E = declare(
          Name, {Symbol::Buffer, static_cast<unsigned>(Buffers.size()), {}}))
    return E;
  auto EqOr = expectEquals(C, "the buffer's name",
                           "buffer NAME = TYPE[COUNT]:CONTENTS");
  if (!EqOr)
    return EqOr.takeError();
  const Token &Eq = **EqOr;
  auto [Spec, Col] = restOfLine(Line, Eq);
  SourceLoc SpecLoc{Kw.Loc.Line, Col};
  BufferDecl B;
  B.Name = Name.Text.str();
  B.Loc = Kw.Loc;
  B.SpecLoc = SpecLoc;
  size_t Open = Spec.find('['), Close = Spec.find(']');
  if (Open == StringRef::npos || Close == StringRef::npos || Close < Open)
    return error(SpecLoc, "bad buffer '" + Spec +
                              "': expected TYPE[COUNT]:zeros|fill=VALUE|"
                              "iota|file=PATH");
  B.TypeText = Spec.take_front(Open).str();
  auto Ty = parseTypeText(B.TypeText);
  if (!Ty)
    return error(SpecLoc, toString(Ty.takeError()));
  B.ElementType = *Ty;
  // COUNT is an expression over the variables defined before.
  auto CountToks =
      lex(Spec.slice(Open + 1, Close), Kw.Loc.Line, Col + unsigned(Open) + 1);
  if (!CountToks)
    return CountToks.takeError();
  Cursor CC{*CountToks};
  if (CC.peek().K == Token::End)
    return error(SourceLoc{Kw.Loc.Line, Col + unsigned(Open) + 1},
                 "expected the element count between '[' and ']'");
  auto Count = parseExprThen(CC);
  if (!Count)
    return Count.takeError();
  B.CountExpr = *Count;
  StringRef Rest = Spec.drop_front(Close + 1);
  std::string Resolved = Rest.str();
  if (Rest.starts_with(":file=") && !Folder.empty()) {
    StringRef Path = Rest.drop_front(6);
    if (!Path.empty() && !llvm::sys::path::is_absolute(Path)) {
      llvm::SmallString<256> Joined(Folder);
      llvm::sys::path::append(Joined, Path);
      Resolved = ":file=" + Joined.str().str();
    }
  }
  B.Rest = std::move(Resolved);
  // The spec's syntax is checked now, with a stand-in count.
  auto Checked = parseBufferSpec(B.TypeText + "[1]" + B.Rest);
  if (!Checked)
    return error(SpecLoc, toString(Checked.takeError()));
  B.HasShape = !Checked->Shape.empty();
  B.HasBox = !Checked->Box.empty();
  B.HasIm2col = Checked->HasIm2col;
  Stmt S;
  S.K = Stmt::Buffer;
  S.Loc = Kw.Loc;
  S.X = static_cast<unsigned>(Buffers.size());
  Buffers.push_back(std::move(B));
  Into.push_back(std::move(S));
  return Error::success();
}

/// BUFFER[INDEX] of `set` and `while`: the buffer, and the index's
/// expression in ElementExpr.
Expected<unsigned> Plan::Impl::parseElement(Cursor &C, StringRef Form) {
  const Token &Name = C.next();
  if (Name.K != Token::Name)
    return error(Name.Loc, "expected a buffer's name, found " + describe(Name) +
                               " (" + Form + ")");
  const Symbol *S = lookup(Name.Text);
  if (!S)
    return error(Name.Loc, "unknown buffer '" + Name.Text + "'");
  if (S->K != Symbol::Buffer)
    return error(Name.Loc,
                 "'" + Name.Text + "' is " + kindText(S->K) + ", not a buffer");
  const Token &Open = C.next();
  if (!Open.is("["))
    return error(Open.Loc, "expected '[' after the buffer's name, found " +
                               describe(Open) + " (" + Form + ")");
  auto Index = parseExpr(C);
  if (!Index)
    return Index.takeError();
  const Token &Close = C.next();
  if (!Close.is("]"))
    return error(Close.Loc,
                 "expected ']' after the index, found " + describe(Close));
  ElementExpr = *Index;
  return S->Index;
}

Error Plan::Impl::parseValue(Cursor &C, LaunchArg &A) {
  const Token &T = C.peek();
  A.ValueLoc = T.Loc;
  auto IsWordLiteral = [](const Token &W) {
    return W.K == Token::Name &&
           llvm::is_contained({"true", "false", "inf", "nan"}, W.Text);
  };
  if (T.K == Token::String || T.K == Token::Float || IsWordLiteral(T)) {
    A.K = LaunchArg::Literal;
    A.Text = T.Text.str();
    C.next();
    return Error::success();
  }
  if (T.is("-") && (C.peek(1).K == Token::Float || IsWordLiteral(C.peek(1)))) {
    A.K = LaunchArg::Literal;
    C.next();
    A.Text = "-" + C.next().Text.str();
    return Error::success();
  }
  if (T.K == Token::Name) {
    const Symbol *S = lookup(T.Text);
    if (S && S->K == Symbol::Buffer) {
      A.K = LaunchArg::BufferName;
      A.Index = S->Index;
      C.next();
      return Error::success();
    }
  }
  auto E = parseExpr(C);
  if (!E)
    return E.takeError();
  A.K = LaunchArg::ExprValue;
  A.Index = *E;
  return Error::success();
}

Error Plan::Impl::parseLaunch(const Token &Kw, Cursor &C,
                              std::vector<Stmt> &Into) {
  const Token &Name = C.next();
  if (Name.K != Token::Name)
    return error(Name.Loc, "expected a kernel's name after 'launch', found " +
                               describe(Name));
  const Symbol *K = lookup(Name.Text);
  if (!K)
    return error(Name.Loc, "unknown kernel '" + Name.Text +
                               "' (declare it first: kernel " + Name.Text +
                               " = PATH[:KERNEL])");
  if (K->K != Symbol::Kernel)
    return error(Name.Loc, "'" + Name.Text + "' is " + kindText(K->K) +
                               ", not a kernel (defined at " +
                               formatLoc(K->Loc) + ")");
  LaunchStmt L;
  L.Kernel = K->Index;
  L.Loc = Kw.Loc;
  L.Stream = BlockStreams.back();
  std::optional<SourceLoc> CubesLoc;
  llvm::StringMap<SourceLoc> Seen;
  while (C.peek().K != Token::End) {
    const Token &Key = C.next();
    if (Key.K != Token::Name)
      return error(Key.Loc, "expected PARAMETER=VALUE or cubes=X[,Y[,Z]], "
                            "found " +
                                describe(Key));
    const Token &Eq = C.next();
    if (!Eq.is("="))
      return error(Eq.Loc, "expected '=' after '" + Key.Text + "', found " +
                               describe(Eq));
    if (Key.Text == "cubes") {
      if (CubesLoc)
        return error(Key.Loc, "cubes= is given twice (first at " +
                                  formatLoc(*CubesLoc) + ")");
      CubesLoc = Key.Loc;
      if (C.peek().isName("indirect") && C.peek(1).is("(")) {
        if (Error E = parseIndirect(C, L))
          return E;
        continue;
      }
      for (;;) {
        auto E = parseExpr(C);
        if (!E)
          return E.takeError();
        L.Cubes.push_back(*E);
        if (!C.peek().is(","))
          break;
        if (L.Cubes.size() == 3)
          return error(C.peek().Loc, "cubes= has at most three dimensions");
        C.next();
      }
      continue;
    }
    auto [It, New] = Seen.try_emplace(Key.Text, Key.Loc);
    if (!New)
      return error(Key.Loc, "parameter %" + Key.Text +
                                " is bound twice (first at " +
                                formatLoc(It->second) + ")");
    LaunchArg A;
    A.Name = Key.Text.str();
    A.NameLoc = Key.Loc;
    if (Error E = parseValue(C, A))
      return E;
    const Token &After = C.peek();
    if (After.K != Token::End && After.K != Token::Name)
      return error(After.Loc, "expected PARAMETER=VALUE or the end of the "
                              "line after the value of '" +
                                  Key.Text + "', found " + describe(After));
    L.Args.push_back(std::move(A));
  }
  if (!CubesLoc)
    return error(Kw.Loc, "launch of '" + Name.Text +
                             "' needs its cube count: cubes=X[,Y[,Z]]");
  Stmt S;
  S.K = Stmt::Launch;
  S.Loc = Kw.Loc;
  S.Stream = L.Stream;
  S.X = static_cast<unsigned>(Launches.size());
  Launches.push_back(std::move(L));
  Into.push_back(std::move(S));
  return Error::success();
}

Expected<unsigned> Plan::Impl::parseNameOf(Cursor &C, Symbol::Kind Want,
                                           StringRef Usage) {
  const Token &Name = C.next();
  StringRef What = kindText(Want);
  if (Name.K != Token::Name)
    return error(Name.Loc, "expected the name of " + What + ", found " +
                               describe(Name) + " (" + Usage + ")");
  const Symbol *S = lookup(Name.Text);
  if (!S) {
    StringRef Word = What.drop_until([](char C) { return C == ' '; }).ltrim();
    return error(Name.Loc, "unknown " + Word + " '" + Name.Text +
                               "' (declare it first: " + Word + " " +
                               Name.Text +
                               (Want == Symbol::Buffer ? " = SPEC" : "") + ")");
  }
  if (S->K != Want)
    return error(Name.Loc, "'" + Name.Text + "' is " + kindText(S->K) +
                               ", not " + What + " (defined at " +
                               formatLoc(S->Loc) + ")");
  return S->Index;
}

/// cubes=indirect(BUFFER[, INDEX]), from `indirect`.
Error Plan::Impl::parseIndirect(Cursor &C, LaunchStmt &L) {
  const Token &Kw = C.next();
  C.next(); // '('
  L.IndirectLoc = Kw.Loc;
  const char *Usage = "cubes=indirect(BUFFER[, INDEX])";
  auto Buf = parseNameOf(C, Symbol::Buffer, Usage);
  if (!Buf)
    return Buf.takeError();
  const BufferDecl &B = Buffers[*Buf];
  if (B.ElementType != Type::scalar(ScalarKind::U32))
    return error(Kw.Loc, "the cube count of an indirect launch is three u32; "
                         "buffer '" + B.Name + "' holds " +
                             B.ElementType.str());
  L.IndirectBuffer = *Buf;
  if (C.peek().is(",")) {
    C.next();
    auto Index = parseExpr(C);
    if (!Index)
      return Index.takeError();
    L.IndirectIndex = *Index;
  }
  const Token &Close = C.next();
  if (!Close.is(")"))
    return error(Close.Loc, "expected ')' to close indirect(, found " +
                                describe(Close) + " (" + Usage + ")");
  return Error::success();
}

/// The statements of the host side (docs/Tools.md §3.7); \p Handled says
/// whether \p Kw was one.
Error Plan::Impl::parseHostStatement(const Token &Kw, Cursor &C,
                                     std::vector<std::vector<Stmt> *> &Blocks,
                                     std::vector<SourceLoc> &Opens,
                                     bool &Handled) {
  Handled = true;
  std::vector<Stmt> &Into = *Blocks.back();
  bool TopLevel = Blocks.size() == 1;
  auto EndOfLine = [&]() -> Error {
    if (C.peek().K != Token::End)
      return error(C.peek().Loc,
                   "expected the end of the line, found " + describe(C.peek()));
    return Error::success();
  };
  auto Simple = [&](Stmt::Kind K, unsigned X, unsigned Y = 0) {
    Stmt S;
    S.K = K;
    S.Loc = Kw.Loc;
    S.Stream = BlockStreams.back();
    S.X = X;
    S.Y = Y;
    Into.push_back(std::move(S));
    return EndOfLine();
  };
  StringRef Word = Kw.Text;
  if (Word == "device" || Word == "stream" || Word == "event") {
    if (!TopLevel)
      return error(Kw.Loc, "'" + Word +
                               "' statements stand at the top level of a "
                               "plan, not inside a block");
    const Token &Name = C.next();
    if (Word == "device") {
      if (Error E = declare(
              Name, {Symbol::Device, unsigned(DeviceNames.size()), {}}))
        return E;
      DeviceNames.push_back(Name.Text.str());
      return EndOfLine();
    }
    if (Word == "event") {
      if (Error E =
              declare(Name, {Symbol::Event, unsigned(EventNames.size()), {}}))
        return E;
      EventNames.push_back(Name.Text.str());
      return EndOfLine();
    }
    if (Error E =
            declare(Name, {Symbol::Stream, unsigned(Streams.size()), {}}))
      return E;
    StreamDecl D;
    D.Name = Name.Text.str();
    if (C.peek().is("=")) {
      C.next();
      auto Dev = parseNameOf(C, Symbol::Device, "stream NAME [= DEVICE]");
      if (!Dev)
        return Dev.takeError();
      D.Device = *Dev;
    }
    Streams.push_back(std::move(D));
    return EndOfLine();
  }
  if (Word == "on") {
    if (Blocks.size() > MaxBlockDepth)
      return error(Kw.Loc,
                   "blocks nested more than " + Twine(MaxBlockDepth) + " deep");
    auto Str = parseNameOf(C, Symbol::Stream, "on STREAM {");
    if (!Str)
      return Str.takeError();
    const Token &Brace = C.next();
    if (!Brace.is("{"))
      return error(Brace.Loc, "expected '{' after the stream's name, found " +
                                  describe(Brace) + " (on STREAM {)");
    if (Error E = EndOfLine())
      return E;
    Stmt S;
    S.K = Stmt::On;
    S.Loc = Kw.Loc;
    S.Stream = *Str;
    Into.push_back(std::move(S));
    Scopes.emplace_back();
    Blocks.push_back(&Into.back().Body);
    Opens.push_back(Kw.Loc);
    BlockStreams.push_back(*Str);
    return Error::success();
  }
  if (Word == "record" || Word == "wait") {
    auto Ev = parseNameOf(C, Symbol::Event, (Word + " EVENT").str());
    if (!Ev)
      return Ev.takeError();
    return Simple(Word == "record" ? Stmt::Record : Stmt::Wait, *Ev);
  }
  if (Word == "sync")
    return Simple(Stmt::Sync, 0);
  if (Word == "read") {
    auto Buf = parseNameOf(C, Symbol::Buffer, "read BUFFER");
    if (!Buf)
      return Buf.takeError();
    return Simple(Stmt::Read, *Buf);
  }
  if (Word == "copy") {
    const char *Usage = "copy INTO = FROM";
    const Token &IntoTok = C.peek();
    auto Dst = parseNameOf(C, Symbol::Buffer, Usage);
    if (!Dst)
      return Dst.takeError();
    if (auto Eq = expectEquals(C, "the buffer copied into", Usage); !Eq)
      return Eq.takeError();
    const Token &FromTok = C.peek();
    auto Src = parseNameOf(C, Symbol::Buffer, Usage);
    if (!Src)
      return Src.takeError();
    const BufferDecl &D = Buffers[*Dst], &F = Buffers[*Src];
    if (*Dst == *Src)
      return error(FromTok.Loc, "copy of '" + D.Name + "' into itself");
    if (D.ElementType != F.ElementType)
      return error(IntoTok.Loc, "copy between buffers of different element "
                                "types: '" + D.Name + "' holds " +
                                    D.ElementType.str() + ", '" + F.Name +
                                    "' " + F.ElementType.str());
    return Simple(Stmt::Copy, *Dst, *Src);
  }
  if (Word == "allreduce") {
    const char *Usage = "allreduce sum|max|min STREAM=BUFFER ...";
    const Token &OpTok = C.next();
    AllReduceStmt A;
    if (OpTok.isName("sum"))
      A.Op = AllReduceOp::Sum;
    else if (OpTok.isName("max"))
      A.Op = AllReduceOp::Max;
    else if (OpTok.isName("min"))
      A.Op = AllReduceOp::Min;
    else
      return error(OpTok.Loc, "expected sum, max or min after 'allreduce', "
                              "found " +
                                  describe(OpTok) + " (" + Usage + ")");
    while (C.peek().K != Token::End) {
      const Token &StrTok = C.peek();
      auto Str = parseNameOf(C, Symbol::Stream, Usage);
      if (!Str)
        return Str.takeError();
      if (auto Eq = expectEquals(C, "the stream's name", Usage); !Eq)
        return Eq.takeError();
      const Token &BufTok = C.peek();
      auto Buf = parseNameOf(C, Symbol::Buffer, Usage);
      if (!Buf)
        return Buf.takeError();
      const BufferDecl &B = Buffers[*Buf];
      if (!isReducible(B.ElementType))
        return error(BufTok.Loc, "buffer '" + B.Name + "' holds " +
                                     B.ElementType.str() +
                                     ", which allreduce cannot reduce "
                                     "(integers, f16, bf16, f32, f64 and "
                                     "lines of them)");
      for (size_t I = 0; I < A.Streams.size(); ++I) {
        const StreamDecl &Earlier = Streams[A.Streams[I]];
        if (Earlier.Device == Streams[*Str].Device)
          return error(StrTok.Loc,
                       "stream '" + Streams[*Str].Name + "' is on the device "
                       "of stream '" + Earlier.Name +
                           "' (a device takes part in an allreduce once)");
        const BufferDecl &Other = Buffers[A.Buffers[I]];
        if (A.Buffers[I] == *Buf)
          return error(BufTok.Loc, "buffer '" + B.Name +
                                       "' is given twice: each device needs "
                                       "its own");
        if (Other.ElementType != B.ElementType)
          return error(BufTok.Loc, "buffer '" + B.Name + "' holds " +
                                       B.ElementType.str() + ", buffer '" +
                                       Other.Name + "' " +
                                       Other.ElementType.str() +
                                       ": the members' element types must "
                                       "match");
      }
      A.Streams.push_back(*Str);
      A.Buffers.push_back(*Buf);
      A.BufferLocs.push_back(BufTok.Loc);
    }
    if (A.Streams.empty())
      return error(OpTok.Loc, "an allreduce needs at least one STREAM=BUFFER "
                              "member (" +
                                  Twine(Usage) + ")");
    AllReduces.push_back(std::move(A));
    return Simple(Stmt::AllReduce, unsigned(AllReduces.size() - 1));
  }
  Handled = false;
  return Error::success();
}

Error Plan::Impl::parseStatement(Cursor &C, StringRef Line, unsigned LineNo,
                                 std::vector<std::vector<Stmt> *> &Blocks,
                                 std::vector<SourceLoc> &Opens) {
  const Token &Kw = C.next();
  std::vector<Stmt> &Into = *Blocks.back();
  auto EndOfLine = [&]() -> Error {
    if (C.peek().K != Token::End)
      return error(C.peek().Loc,
                   "expected the end of the line, found " + describe(C.peek()));
    return Error::success();
  };
  if (Kw.is("}")) {
    if (Blocks.size() == 1)
      return error(Kw.Loc, "'}' without a loop to close");
    Blocks.pop_back();
    Opens.pop_back();
    Scopes.pop_back();
    BlockStreams.pop_back();
    return EndOfLine();
  }
  if (Kw.K != Token::Name)
    return error(Kw.Loc, "expected a statement (kernel, buffer, let, for, "
                         "repeat, while, launch, swap, set, a host-side "
                         "statement or '}'), found " +
                             describe(Kw));
  bool TopLevel = Blocks.size() == 1;
  if (Kw.Text == "kernel" || Kw.Text == "buffer") {
    if (C.Toks.size() > 1 && C.Toks[C.Toks.size() - 2].Loc.Line != LineNo)
      return error(Kw.Loc, "a '" + Kw.Text +
                               "' statement is one line: it "
                               "cannot be continued with '\\'");
    if (!TopLevel)
      return error(Kw.Loc, "'" + Kw.Text +
                               "' statements stand at the top level of a "
                               "plan, not inside a loop");
    if (Kw.Text == "buffer" && FirstWhile)
      return error(Kw.Loc, "buffers are declared before the first while "
                           "loop (at " +
                               formatLoc(*FirstWhile) + ")");
    return Kw.Text == "kernel" ? parseKernel(Kw, C, Line)
                               : parseBuffer(Kw, C, Line, Into);
  }
  if (Kw.Text == "let") {
    const Token &Name = C.next();
    if (auto Eq = expectEquals(C, "the variable's name", "let NAME = EXPR");
        !Eq)
      return Eq.takeError();
    auto Value = parseExprThen(C);
    if (!Value)
      return Value.takeError();
    Stmt S;
    S.K = Stmt::Let;
    S.Loc = Kw.Loc;
    S.A = *Value;
    // An existing variable is set; a new name is defined to the end of the
    // enclosing block.
    const Symbol *Old = Name.K == Token::Name ? lookup(Name.Text) : nullptr;
    if (Old && Old->K == Symbol::Var) {
      S.Slot = Old->Index;
    } else if (Old && Old->K == Symbol::LoopVar) {
      return error(Name.Loc,
                   "'" + Name.Text + "' is a loop variable (defined at " +
                       formatLoc(Old->Loc) + "): only its loop sets it");
    } else {
      if (Error E = declare(Name, {Symbol::Var, SlotCount, {}}))
        return E;
      S.Slot = SlotCount++;
    }
    Into.push_back(std::move(S));
    return Error::success();
  }
  if (Kw.Text == "for" || Kw.Text == "repeat") {
    if (Blocks.size() > MaxBlockDepth)
      return error(Kw.Loc,
                   "loops nested more than " + Twine(MaxBlockDepth) + " deep");
    Stmt S;
    S.Loc = Kw.Loc;
    std::optional<Token> Var;
    if (Kw.Text == "for") {
      S.K = Stmt::For;
      Var = C.next();
      if (auto Eq = expectEquals(C, "the loop variable",
                                 "for VAR = FROM to TO [step STEP] {");
          !Eq)
        return Eq.takeError();
      auto From = parseExprThen(C, "to");
      if (!From)
        return From.takeError();
      C.next();
      auto To = parseExpr(C);
      if (!To)
        return To.takeError();
      S.A = *From;
      S.B = *To;
      if (C.peek().isName("step")) {
        C.next();
        auto Step = parseExpr(C);
        if (!Step)
          return Step.takeError();
        S.C = *Step;
        S.HasStep = true;
      }
    } else {
      S.K = Stmt::Repeat;
      auto Count = parseExpr(C);
      if (!Count)
        return Count.takeError();
      S.A = *Count;
    }
    const Token &Brace = C.next();
    if (!Brace.is("{"))
      return error(Brace.Loc, "expected '{' at the end of the " + Kw.Text +
                                  " line, found " + describe(Brace));
    if (Error E = EndOfLine())
      return E;
    Scopes.emplace_back();
    if (Var) {
      if (Error E = declare(*Var, {Symbol::LoopVar, SlotCount, {}}))
        return E;
      S.Slot = SlotCount++;
    }
    Into.push_back(std::move(S));
    Blocks.push_back(&Into.back().Body);
    Opens.push_back(Kw.Loc);
    BlockStreams.push_back(BlockStreams.back());
    return Error::success();
  }
  if (Kw.Text == "launch") {
    if (Error E = parseLaunch(Kw, C, Into))
      return E;
    return EndOfLine();
  }
  if (Kw.Text == "set") {
    Stmt S;
    S.K = Stmt::Set;
    S.Loc = Kw.Loc;
    auto Buf = parseElement(C, "set BUFFER[INDEX] = VALUE");
    if (!Buf)
      return Buf.takeError();
    S.X = *Buf;
    S.A = ElementExpr;
    if (auto Eq = expectEquals(C, "the element", "set BUFFER[INDEX] = VALUE");
        !Eq)
      return Eq.takeError();
    LaunchArg A;
    if (Error E = parseValue(C, A))
      return E;
    SetValue V;
    V.Loc = A.ValueLoc;
    const BufferDecl &B = Buffers[S.X];
    if (A.K == LaunchArg::BufferName)
      return error(A.ValueLoc, "expected a value of type " +
                                   B.ElementType.str() + ", found a buffer");
    if (A.K == LaunchArg::Literal) {
      auto Bytes = parseValueText(A.Text, B.ElementType);
      if (!Bytes)
        return error(A.ValueLoc, "buffer '" + B.Name + "' (" +
                                     B.ElementType.str() +
                                     "): " + toString(Bytes.takeError()));
      V.Bytes = std::move(*Bytes);
    } else {
      V.ExprIdx = A.Index;
    }
    S.Y = static_cast<unsigned>(Sets.size());
    Sets.push_back(std::move(V));
    Into.push_back(std::move(S));
    return EndOfLine();
  }
  if (Kw.Text == "while") {
    if (Blocks.size() > MaxBlockDepth)
      return error(Kw.Loc,
                   "loops nested more than " + Twine(MaxBlockDepth) + " deep");
    Stmt S;
    S.K = Stmt::While;
    S.Loc = Kw.Loc;
    if (!FirstWhile)
      FirstWhile = Kw.Loc;
    auto Buf = parseElement(C, "while BUFFER[INDEX] != 0 max LIMIT {");
    if (!Buf)
      return Buf.takeError();
    S.X = *Buf;
    S.A = ElementExpr;
    const Token &Bang = C.next();
    const Token &Eq = C.next();
    const Token &Zero = C.next();
    if (!Bang.is("!") || !Eq.is("=") || Eq.Loc.Col != Bang.Loc.Col + 1 ||
        Zero.K != Token::Int || Zero.Text.ltrim('0') != "")
      return error(Bang.Loc, "expected '!= 0' after the element (while "
                             "BUFFER[INDEX] != 0 max LIMIT {)");
    const Token &Max = C.next();
    if (!Max.isName("max"))
      return error(Max.Loc, "expected 'max LIMIT' after '!= 0', found " +
                                describe(Max) +
                                " (a while loop has a maximum number of "
                                "iterations)");
    auto Limit = parseExpr(C);
    if (!Limit)
      return Limit.takeError();
    S.C = *Limit;
    const Token &Brace = C.next();
    if (!Brace.is("{"))
      return error(Brace.Loc, "expected '{' at the end of the while line, "
                              "found " +
                                  describe(Brace));
    if (Error E = EndOfLine())
      return E;
    Scopes.emplace_back();
    Into.push_back(std::move(S));
    Blocks.push_back(&Into.back().Body);
    Opens.push_back(Kw.Loc);
    BlockStreams.push_back(BlockStreams.back());
    return Error::success();
  }
  if (Kw.Text == "swap") {
    Stmt S;
    S.K = Stmt::Swap;
    S.Loc = Kw.Loc;
    const Symbol *Both[2];
    Token Names[2];
    for (int I = 0; I < 2; ++I) {
      Names[I] = C.next();
      if (Names[I].K != Token::Name)
        return error(Names[I].Loc, "expected a buffer's name, found " +
                                       describe(Names[I]) + " (swap A B)");
      Both[I] = lookup(Names[I].Text);
      if (!Both[I] || Both[I]->K != Symbol::Buffer)
        return error(Names[I].Loc,
                     Both[I] ? "'" + Names[I].Text + "' is " +
                                   kindText(Both[I]->K) + ", not a buffer"
                             : "unknown buffer '" + Names[I].Text + "'");
    }
    S.X = Both[0]->Index;
    S.Y = Both[1]->Index;
    const BufferDecl &X = Buffers[S.X], &Y = Buffers[S.Y];
    if (S.X == S.Y)
      return error(Names[1].Loc, "swap of '" + X.Name + "' with itself");
    if (X.ElementType != Y.ElementType)
      return error(Kw.Loc, "swap of buffers of different element types: '" +
                               X.Name + "' holds " + X.ElementType.str() +
                               ", '" + Y.Name + "' " + Y.ElementType.str());
    if (X.HasShape != Y.HasShape || X.HasBox != Y.HasBox ||
        X.HasIm2col != Y.HasIm2col)
      return error(Kw.Loc, "swap of '" + X.Name + "' and '" + Y.Name +
                               "': one is bound as a tensor or tensor map "
                               "and the other not in the same way");
    Into.push_back(std::move(S));
    return EndOfLine();
  }
  bool Handled = false;
  if (Error E = parseHostStatement(Kw, C, Blocks, Opens, Handled))
    return E;
  if (Handled)
    return Error::success();
  return error(Kw.Loc, "unknown statement '" + Kw.Text +
                           "' (expected kernel, buffer, let, for, repeat, "
                           "while, launch, swap, set, device, stream, event, "
                           "on, record, wait, sync, copy, read, allreduce or "
                           "'}')");
}

Error Plan::Impl::parseText(StringRef Text) {
  Scopes.emplace_back();
  std::vector<std::vector<Stmt> *> Blocks{&Top};
  std::vector<SourceLoc> Opens{SourceLoc{}};
  llvm::SmallVector<StringRef, 0> Lines;
  Text.split(Lines, '\n');
  std::vector<Token> Logical;
  StringRef FirstLine;
  unsigned FirstNo = 0;
  for (unsigned I = 0; I < Lines.size(); ++I) {
    StringRef Line = Lines[I];
    unsigned LineNo = I + 1;
    // A kernel or buffer statement is lexed up to its '=': what follows is
    // a path or a buffer spec, taken as raw text (restOfLine).
    StringRef Lexed = Line;
    StringRef First = Line.ltrim().take_while(isNameChar);
    if (Logical.empty() && (First == "kernel" || First == "buffer"))
      Lexed = Line.take_until([](char C) { return C == '=' || C == '#'; });
    if (Lexed.size() < Line.size() && Line[Lexed.size()] == '=')
      Lexed = Line.take_front(Lexed.size() + 1);
    auto Toks = lex(Lexed, LineNo, 1);
    if (!Toks)
      return Toks.takeError();
    Token EndTok = Toks->back();
    Toks->pop_back();
    if (Logical.empty()) {
      FirstLine = Line;
      FirstNo = LineNo;
    }
    // A '\' last on a line continues the statement on the next one.
    bool Continued = !Toks->empty() && Toks->back().is("\\");
    if (Continued)
      Toks->pop_back();
    for (const Token &T : *Toks)
      if (T.is("\\"))
        return error(T.Loc, "a '\\' continues a statement only as the last "
                            "thing on a line");
    Logical.insert(Logical.end(), Toks->begin(), Toks->end());
    if (Continued && I + 1 < Lines.size())
      continue;
    if (Logical.empty())
      continue;
    Logical.push_back(EndTok);
    Cursor C{Logical};
    if (Error E = parseStatement(C, FirstLine, FirstNo, Blocks, Opens))
      return E;
    Logical.clear();
  }
  if (Blocks.size() > 1)
    return error(Opens.back(), "the '{' of this loop is never closed by a "
                               "'}'");
  return Error::success();
}

// ---- running ---------------------------------------------------------------

Error Plan::Impl::createBuffer(BufferDecl &B) {
  auto Count = eval(B.CountExpr);
  if (!Count)
    return Count.takeError();
  if (*Count < 0)
    return error(B.SpecLoc, "buffer '" + B.Name + "' has a negative count (" +
                                Twine(*Count) + ")");
  std::string Text = B.TypeText + "[" + std::to_string(*Count) + "]" + B.Rest;
  auto Spec = parseBufferSpec(Text);
  if (!Spec)
    return error(B.SpecLoc, toString(Spec.takeError()));
  auto Made = kiln::createBuffer(*Spec);
  if (!Made)
    return error(B.SpecLoc,
                 "buffer '" + B.Name + "': " + toString(Made.takeError()));
  B.Storage = std::move(*Made);
  ArgBinding Binding = ArgBinding::buffer(B.Storage);
  if (!Spec->Shape.empty())
    Binding = Binding.withShape(Spec->Shape, Spec->Strides);
  if (!Spec->Box.empty())
    Binding = Binding.withBox(Spec->Box);
  if (Spec->HasIm2col)
    Binding = Binding.withIm2col(Spec->Lower, Spec->Upper,
                                 Spec->ChannelsPerPixel, Spec->PixelsPerColumn);
  B.Binding = Binding;
  B.Created = true;
  return Error::success();
}

/// \p V as a value of \p Ty: an integer must fit, a float is rounded to
/// nearest, a bool is 0 or 1; a line gets V in every lane.
static Expected<std::vector<uint8_t>> convertValue(int64_t V, Type Ty) {
  if (Ty.elementKind() == ScalarKind::Bool) {
    if (V != 0 && V != 1)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "a bool takes 0 or 1, not " + Twine(V));
    return parseValueText(V ? "true" : "false", Ty);
  }
  return parseValueText(std::to_string(V), Ty);
}

Error Plan::Impl::launch(const Stmt &S,
                         llvm::function_ref<Error(const PlanLaunch &)> Fn) {
  LaunchStmt &L = Launches[S.X];
  std::array<uint32_t, 3> Cubes{1, 1, 1};
  uint64_t Product = 1;
  for (size_t D = 0; D < L.Cubes.size(); ++D) {
    auto V = eval(L.Cubes[D]);
    if (!V)
      return V.takeError();
    if (*V < 0 || *V > int64_t(UINT32_MAX))
      return error(Exprs[L.Cubes[D]].Begin, "cube count " + Twine(*V) +
                                                " is out of range (0 to " +
                                                Twine(UINT32_MAX) + ")");
    Cubes[D] = static_cast<uint32_t>(*V);
    Product *= Cubes[D];
    if (Product > UINT32_MAX)
      return error(L.Loc,
                   "the cube count's product is above " + Twine(UINT32_MAX));
  }
  L.Bindings.clear();
  for (const BoundParam &P : L.Params) {
    if (P.IsBuffer) {
      L.Bindings.push_back(Buffers[Names[P.Buffer]].Binding);
      continue;
    }
    if (!P.ExprIdx) {
      L.Bindings.push_back(
          ArgBinding::value(P.Ty, P.Bytes.data(), P.Bytes.size()));
      continue;
    }
    auto V = eval(*P.ExprIdx);
    if (!V)
      return V.takeError();
    auto Bytes = convertValue(*V, P.Ty);
    if (!Bytes)
      return error(P.Loc, "%" + P.Name + " (" + P.Ty.str() +
                              "): " + toString(Bytes.takeError()));
    L.Bindings.push_back(ArgBinding::value(P.Ty, Bytes->data(), Bytes->size()));
  }
  unsigned Device = Streams[L.Stream].Device;
  // An indirect launch reads its cube count when it runs: the three u32
  // from element INDEX of the buffer its name names now.
  const uint32_t *Indirect = nullptr;
  if (L.IndirectBuffer) {
    int64_t Index = 0;
    if (L.IndirectIndex) {
      auto V = eval(*L.IndirectIndex);
      if (!V)
        return V.takeError();
      Index = *V;
    }
    const BufferDecl &B = Buffers[Names[*L.IndirectBuffer]];
    uint64_t Count = B.Storage.count();
    if (Index < 0 || uint64_t(Index) > Count || Count - uint64_t(Index) < 3)
      return error(L.IndirectIndex ? Exprs[*L.IndirectIndex].Begin
                                   : L.IndirectLoc,
                   "indirect cube count: elements " + Twine(Index) + " to " +
                       Twine(Index) + " + 2 are outside buffer '" +
                       Buffers[*L.IndirectBuffer].Name + "' (" + Twine(Count) +
                       " elements)");
    Indirect = B.Storage.as<uint32_t>() + Index;
  }
  // The check run, and a direct launch on the plan's own stream, launch
  // here and now, as plans without streams always did.
  if (Checking || (L.Stream == 0 && !Indirect)) {
    PlanLaunch PL{S.X, L.Kernel, Cubes, L.Bindings, Device};
    return Fn(PL);
  }
  auto Work = [this, Fn, Statement = S.X, Kernel = L.Kernel, Cubes,
               Bindings = L.Bindings, Device, Indirect]() -> Error {
    std::array<uint32_t, 3> Count = Cubes;
    if (Indirect) {
      uint64_t Product = 1;
      for (unsigned D = 0; D < 3; ++D) {
        Count[D] = Indirect[D];
        Product = std::min<uint64_t>(Product * Count[D], uint64_t(1) << 33);
      }
      const LaunchStmt &L = Launches[Statement];
      if (Product > UINT32_MAX)
        return error(L.Loc, "the indirect cube count " + Twine(Count[0]) +
                                "," + Twine(Count[1]) + "," + Twine(Count[2]) +
                                " read from buffer '" +
                                Buffers[*L.IndirectBuffer].Name +
                                "' is more than " + Twine(UINT32_MAX) +
                                " cubes");
    }
    PlanLaunch PL{Statement, Kernel, Count, Bindings, Device};
    return Fn(PL);
  };
  return Queues[L.Stream]->push(std::move(Work));
}

/// Whether element \p I of \p B is all zero bits.
static bool isZero(const BufferDecl &B, uint64_t I) {
  unsigned Size = B.ElementType.storeSize();
  const uint8_t *E = B.Storage.as<uint8_t>() + I * Size;
  return std::all_of(E, E + Size, [](uint8_t Byte) { return Byte == 0; });
}

/// The index of a `set` or `while` element, in range of the buffer that
/// its name names now.
Expected<uint64_t> Plan::Impl::elementIndex(const Stmt &S) {
  auto I = eval(S.A);
  if (!I)
    return I.takeError();
  const BufferDecl &B = Buffers[Names[S.X]];
  if (*I < 0 || uint64_t(*I) >= B.Storage.count())
    return error(Exprs[S.A].Begin, "index " + Twine(*I) +
                                       " is outside buffer '" +
                                       Buffers[S.X].Name + "' (" +
                                       Twine(B.Storage.count()) + " elements)");
  return uint64_t(*I);
}

Error Plan::Impl::execOne(const Stmt &S,
                          llvm::function_ref<Error(const PlanLaunch &)> Fn) {
  Error E = execStatement(S, Fn);
  // Past a while loop, the check run's errors are the run's to report
  // (the statements of a loop's body have reported theirs already).
  if (E && Checking && Unsure && S.K != Stmt::Buffer) {
    consumeError(std::move(E));
    return Error::success();
  }
  return E;
}

Error Plan::Impl::execStatement(
    const Stmt &S, llvm::function_ref<Error(const PlanLaunch &)> Fn) {
  if (++Steps > MaxPlanSteps)
    return error(S.Loc, "the plan runs more than " + Twine(MaxPlanSteps) +
                            " statements and loop iterations (a runaway "
                            "loop?)");
  switch (S.K) {
  case Stmt::Buffer:
    if (!Buffers[S.X].Created)
      return createBuffer(Buffers[S.X]);
    return Error::success();
  case Stmt::Let: {
    auto V = eval(S.A);
    if (!V)
      return V.takeError();
    Slots[S.Slot] = *V;
    return Error::success();
  }
  case Stmt::Swap:
    std::swap(Names[S.X], Names[S.Y]);
    return Error::success();
  case Stmt::Set: {
    auto I = elementIndex(S);
    if (!I)
      return I.takeError();
    const SetValue &V = Sets[S.Y];
    BufferDecl &B = Buffers[Names[S.X]];
    std::vector<uint8_t> Bytes = V.Bytes;
    if (V.ExprIdx) {
      auto Value = eval(*V.ExprIdx);
      if (!Value)
        return Value.takeError();
      auto Converted = convertValue(*Value, B.ElementType);
      if (!Converted)
        return error(V.Loc, "buffer '" + Buffers[S.X].Name + "' (" +
                                B.ElementType.str() +
                                "): " + toString(Converted.takeError()));
      Bytes = std::move(*Converted);
    }
    if (!Checking)
      std::memcpy(B.Storage.as<uint8_t>() + *I * Bytes.size(), Bytes.data(),
                  Bytes.size());
    return Error::success();
  }
  case Stmt::While: {
    if (Checking)
      Unsure = true;
    auto Limit = eval(S.C);
    if (!Limit)
      return Limit.takeError();
    if (*Limit < 0)
      return error(Exprs[S.C].Begin,
                   "while limit " + Twine(*Limit) + " is negative");
    for (int64_t Done = 0;; ++Done) {
      auto I = elementIndex(S);
      if (!I)
        return I.takeError();
      // The check run launches nothing: the body is checked once.
      if (Checking ? Done == std::min<int64_t>(1, *Limit)
                   : isZero(Buffers[Names[S.X]], *I))
        return Error::success();
      if (Done == *Limit)
        return error(S.Loc, "the while loop is still running after " +
                                Twine(*Limit) + " iteration" +
                                (*Limit == 1 ? "" : "s") + " (its max)");
      if (++Steps > MaxPlanSteps)
        return error(S.Loc, "the plan runs more than " + Twine(MaxPlanSteps) +
                                " statements and loop iterations (a runaway "
                                "loop?)");
      if (Error E = exec(S.Body, Fn))
        return E;
    }
  }
  case Stmt::Launch:
    return launch(S, Fn);
  case Stmt::On:
  case Stmt::Record:
  case Stmt::Wait:
  case Stmt::Sync:
  case Stmt::Copy:
  case Stmt::Read:
  case Stmt::AllReduce:
    return execHost(S, Fn);
  case Stmt::Repeat: {
    auto N = eval(S.A);
    if (!N)
      return N.takeError();
    if (*N < 0)
      return error(Exprs[S.A].Begin,
                   "repeat count " + Twine(*N) + " is negative");
    for (int64_t I = 0; I < *N; ++I) {
      if (++Steps > MaxPlanSteps)
        return error(S.Loc, "the plan runs more than " + Twine(MaxPlanSteps) +
                                " statements and loop iterations (a runaway "
                                "loop?)");
      if (Error E = exec(S.Body, Fn))
        return E;
    }
    return Error::success();
  }
  case Stmt::For: {
    auto From = eval(S.A);
    if (!From)
      return From.takeError();
    auto To = eval(S.B);
    if (!To)
      return To.takeError();
    int64_t Step = 1;
    if (S.HasStep) {
      auto V = eval(S.C);
      if (!V)
        return V.takeError();
      if (*V == 0)
        return error(Exprs[S.C].Begin, "a loop's step cannot be 0");
      Step = *V;
    }
    for (int64_t I = *From; Step > 0 ? I < *To : I > *To;) {
      if (++Steps > MaxPlanSteps)
        return error(S.Loc, "the plan runs more than " + Twine(MaxPlanSteps) +
                                " statements and loop iterations (a runaway "
                                "loop?)");
      Slots[S.Slot] = I;
      if (Error E = exec(S.Body, Fn))
        return E;
      // A next value past the 64-bit range is past the bound as well.
      if (__builtin_add_overflow(I, Step, &I))
        break;
    }
    return Error::success();
  }
  }
  llvm_unreachable("unknown statement");
}

Error Plan::Impl::syncAll() {
  std::optional<std::string> First;
  for (std::unique_ptr<HostQueue> &Q : Queues)
    if (Error E = Q->synchronize()) {
      std::string Why = toString(std::move(E));
      if (!First)
        First = std::move(Why);
    }
  if (First)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *First);
  return Error::success();
}

Error Plan::Impl::execHost(const Stmt &S,
                           llvm::function_ref<Error(const PlanLaunch &)> Fn) {
  switch (S.K) {
  case Stmt::On:
    return exec(S.Body, Fn);
  case Stmt::Record:
    Recorded[S.X] = true;
    if (!Checking)
      EventPoints[S.X] = Queues[S.Stream]->record();
    return Error::success();
  case Stmt::Wait:
    if (!Recorded[S.X])
      return error(S.Loc, "event '" + EventNames[S.X] +
                              "' is waited for before this run records it "
                              "(record " +
                              EventNames[S.X] + " on a stream first)");
    if (Checking)
      return Error::success();
    // A failed stream's event fails the waiting stream with its failure.
    return Queues[S.Stream]->wait(EventPoints[S.X], "");
  case Stmt::Sync:
    return Checking ? Error::success() : syncAll();
  case Stmt::Copy: {
    BufferDecl &Dst = Buffers[Names[S.X]];
    const BufferDecl &Src = Buffers[Names[S.Y]];
    if (Dst.Storage.count() != Src.Storage.count())
      return error(S.Loc, "copy of '" + Buffers[S.Y].Name + "' (" +
                              Twine(Src.Storage.count()) + " elements) into '" +
                              Buffers[S.X].Name + "' (" +
                              Twine(Dst.Storage.count()) +
                              " elements): the counts must match");
    if (Checking)
      return Error::success();
    void *To = Dst.Storage.data();
    const void *From = Src.Storage.data();
    uint64_t Bytes = Dst.Storage.sizeInBytes();
    return Queues[S.Stream]->push([To, From, Bytes] {
      if (Bytes)
        std::memmove(To, From, Bytes);
      return Error::success();
    });
  }
  case Stmt::Read: {
    const BufferDecl &B = Buffers[Names[S.X]];
    if (Checking)
      return Error::success();
    auto Snap = HostBuffer::create(B.ElementType, B.Storage.count());
    if (!Snap)
      return error(S.Loc, "read of '" + Buffers[S.X].Name +
                              "': " + toString(Snap.takeError()));
    Reads.push_back(std::make_unique<ReadSnapshot>(
        ReadSnapshot{Buffers[S.X].Name, std::move(*Snap)}));
    void *To = Reads.back()->Contents.data();
    const void *From = B.Storage.data();
    uint64_t Bytes = B.Storage.sizeInBytes();
    return Queues[S.Stream]->push([To, From, Bytes] {
      if (Bytes)
        std::memcpy(To, From, Bytes);
      return Error::success();
    });
  }
  case Stmt::AllReduce: {
    const AllReduceStmt &A = AllReduces[S.X];
    std::vector<void *> Data;
    uint64_t Count = 0;
    Type Ty = Buffers[A.Buffers[0]].ElementType;
    for (size_t I = 0; I < A.Buffers.size(); ++I) {
      BufferDecl &B = Buffers[Names[A.Buffers[I]]];
      if (I == 0)
        Count = B.Storage.count();
      else if (B.Storage.count() != Count)
        return error(A.BufferLocs[I],
                     "buffer '" + Buffers[A.Buffers[I]].Name + "' has " +
                         Twine(B.Storage.count()) + " elements, buffer '" +
                         Buffers[A.Buffers[0]].Name + "' " + Twine(Count) +
                         ": the members' counts must match");
      Data.push_back(B.Storage.data());
    }
    if (Checking || Data.size() == 1)
      return Error::success();
    // As the API's allReduce: every other member's stream records an
    // event, the first waits for them, reduces and records one event that
    // the others wait for. No stream waits for work queued after it.
    HostQueue &First = *Queues[A.Streams[0]];
    for (size_t I = 1; I < A.Streams.size(); ++I)
      if (Error E = First.wait(Queues[A.Streams[I]]->record(), ""))
        return E;
    AllReduceOp Op = A.Op;
    if (Error E = First.push([Data, Count, Ty, Op] {
          allReduceInPlace(Data, Count, Ty, Op);
          return Error::success();
        }))
      return E;
    std::shared_ptr<HostEvent> Reduced = First.record();
    for (size_t I = 1; I < A.Streams.size(); ++I)
      if (Error E = Queues[A.Streams[I]]->wait(Reduced, ""))
        return E;
    return Error::success();
  }
  default:
    llvm_unreachable("not a host-side statement");
  }
}

Error Plan::Impl::exec(const std::vector<Stmt> &Body,
                       llvm::function_ref<Error(const PlanLaunch &)> Fn) {
  for (const Stmt &S : Body)
    if (Error E = execOne(S, Fn))
      return E;
  return Error::success();
}

// ---- Plan ------------------------------------------------------------------

Plan::Plan(std::unique_ptr<Impl> P) : P(std::move(P)) {}
Plan::Plan(Plan &&) = default;
Plan &Plan::operator=(Plan &&) = default;
Plan::~Plan() = default;

Expected<Plan> Plan::parse(StringRef Text, StringRef Path) {
  auto I = std::make_unique<Impl>();
  I->FileName = Path.str();
  if (Path != "<stdin>")
    I->Folder = llvm::sys::path::parent_path(Path).str();
  if (Error E = I->parseText(Text))
    return E;
  if (I->Kernels.empty())
    return makeDiagnostic(Path, SourceLoc(),
                          "the plan declares no kernel (kernel NAME = "
                          "PATH[:KERNEL])");
  return Plan(std::move(I));
}

StringRef Plan::fileName() const { return P->FileName; }
const std::vector<PlanKernel> &Plan::kernels() const { return P->Kernels; }
unsigned Plan::launchCount() const { return P->Launches.size(); }
SourceLoc Plan::launchLoc(unsigned S) const { return P->Launches[S].Loc; }
StringRef Plan::launchKernelName(unsigned S) const {
  return P->Kernels[P->Launches[S].Kernel].Name;
}

Error Plan::launchError(unsigned S, const Twine &Message) const {
  return P->error(P->Launches[S].Loc, Message);
}

Error Plan::bind(llvm::ArrayRef<std::vector<ParamMetadata>> Params) {
  assert(Params.size() == P->Kernels.size() && "one list per kernel");
  for (LaunchStmt &L : P->Launches) {
    const PlanKernel &K = P->Kernels[L.Kernel];
    llvm::ArrayRef<ParamMetadata> Ps = Params[L.Kernel];
    std::vector<const LaunchArg *> ByParam(Ps.size(), nullptr);
    for (const LaunchArg &A : L.Args) {
      auto It = llvm::find_if(
          Ps, [&](const ParamMetadata &PM) { return PM.Name == A.Name; });
      if (It == Ps.end()) {
        std::string Known;
        for (const ParamMetadata &PM : Ps)
          Known += (Known.empty() ? "%" : ", %") + PM.Name;
        return P->error(
            A.NameLoc, "kernel @" + K.Kernel + " has no parameter %" + A.Name +
                           " (parameters: " + (Known.empty() ? "none" : Known) +
                           ")");
      }
      ByParam[It - Ps.begin()] = &A;
    }
    L.Params.clear();
    for (size_t I = 0; I < Ps.size(); ++I) {
      const ParamMetadata &PM = Ps[I];
      const LaunchArg *A = ByParam[I];
      std::string What = PM.IsBuffer ? "a buffer of " + PM.Ty.str()
                                     : "a value of type " + PM.Ty.str();
      if (!A)
        return P->error(L.Loc, "parameter %" + PM.Name + " (" + What +
                                   ") of kernel @" + K.Kernel +
                                   " is not bound (give " + PM.Name + "=" +
                                   (PM.IsBuffer ? "BUFFER" : "VALUE") + ")");
      BoundParam B;
      B.IsBuffer = PM.IsBuffer;
      B.Ty = PM.Ty;
      B.Name = PM.Name;
      B.Loc = A->ValueLoc;
      if (PM.IsBuffer) {
        if (A->K != LaunchArg::BufferName)
          return P->error(A->ValueLoc, "%" + PM.Name + " is " + What +
                                           ": give the name of a buffer");
        const BufferDecl &Buf = P->Buffers[A->Index];
        if (Buf.ElementType != PM.Ty)
          return P->error(A->ValueLoc, "%" + PM.Name + " is " + What +
                                           ", buffer '" + Buf.Name +
                                           "' holds " + Buf.ElementType.str());
        if (PM.IsIm2col && !Buf.HasIm2col)
          return P->error(A->ValueLoc,
                          "%" + PM.Name +
                              " is an im2col tensor_map parameter: buffer '" +
                              Buf.Name + "' needs :shape= and :im2col=");
        if (PM.IsTensorMap && !PM.IsIm2col && !Buf.HasBox)
          return P->error(A->ValueLoc,
                          "%" + PM.Name +
                              " is a tensor_map parameter: buffer '" +
                              Buf.Name + "' needs :shape= and :box=");
        if (!PM.IsTensorMap && (Buf.HasBox || Buf.HasIm2col))
          return P->error(A->ValueLoc, "buffer '" + Buf.Name +
                                           "' is a tensor map, but %" +
                                           PM.Name + " is a buffer parameter");
        if (PM.IsTensorMap && !PM.IsIm2col && Buf.HasIm2col)
          return P->error(A->ValueLoc, "buffer '" + Buf.Name +
                                           "' is an im2col tensor "
                                           "map, but %" +
                                           PM.Name +
                                           " is a tiled tensor_map parameter");
        B.Buffer = A->Index;
      } else if (A->K == LaunchArg::BufferName) {
        return P->error(A->ValueLoc,
                        "%" + PM.Name + " is " + What + ", not a buffer");
      } else if (A->K == LaunchArg::Literal) {
        auto Bytes = parseValueText(A->Text, PM.Ty);
        if (!Bytes)
          return P->error(A->ValueLoc, "%" + PM.Name + " (" + PM.Ty.str() +
                                           "): " + toString(Bytes.takeError()));
        B.Bytes = std::move(*Bytes);
      } else {
        B.ExprIdx = A->Index;
      }
      L.Params.push_back(std::move(B));
    }
  }
  P->Bound = true;
  return Error::success();
}

Error Plan::check() {
  P->Checking = true;
  P->Unsure = false;
  Error E = run([](const PlanLaunch &) { return Error::success(); });
  P->Checking = false;
  return E;
}

Error Plan::run(llvm::function_ref<Error(const PlanLaunch &)> Launch) {
  assert(P->Bound && "bind() before run()");
  P->Slots.assign(P->SlotCount, 0);
  P->Names.resize(P->Buffers.size());
  std::iota(P->Names.begin(), P->Names.end(), 0u);
  P->Steps = 0;
  P->HasRun = true;
  P->Recorded.assign(P->EventNames.size(), false);
  P->EventPoints.assign(P->EventNames.size(), nullptr);
  if (P->Checking)
    return P->exec(P->Top, Launch);
  if (P->Queues.empty())
    for (size_t I = 0; I < P->Streams.size(); ++I)
      P->Queues.push_back(std::make_unique<HostQueue>(/*Inline=*/I == 0));
  for (std::unique_ptr<HostQueue> &Q : P->Queues)
    Q->reset();
  Error E = P->exec(P->Top, Launch);
  // Every stream finishes its work before the run ends, failed or not.
  Error Streams = P->syncAll();
  if (E) {
    consumeError(std::move(Streams));
    return E;
  }
  return Streams;
}

unsigned Plan::deviceCount() const { return P->DeviceNames.size(); }
unsigned Plan::launchDevice(unsigned S) const {
  return P->Streams[P->Launches[S].Stream].Device;
}
unsigned Plan::launchKernel(unsigned S) const { return P->Launches[S].Kernel; }

std::vector<PlanRead> Plan::reads() const {
  std::vector<PlanRead> R;
  for (const std::unique_ptr<ReadSnapshot> &S : P->Reads)
    R.push_back({S->Name, &S->Contents});
  return R;
}

bool Plan::hasBuffer(StringRef Name) const {
  return llvm::any_of(P->Buffers,
                      [&](const BufferDecl &B) { return B.Name == Name; });
}

const HostBuffer *Plan::buffer(StringRef Name) const {
  if (!P->HasRun)
    return nullptr;
  for (size_t I = 0; I < P->Buffers.size(); ++I)
    if (P->Buffers[I].Name == Name) {
      const BufferDecl &B = P->Buffers[P->Names[I]];
      return B.Created ? &B.Storage : nullptr;
    }
  return nullptr;
}
