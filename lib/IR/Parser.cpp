//===- Parser.cpp - Parse the text form of the Kiln IR --------------------===//
//
// A recursive-descent parser over the tokens of Lexer.h. It stops at the
// first problem. Recursion only follows block nesting, which is capped at
// MaxBlockDepth, so no input can exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "Lexer.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Literal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace kiln;

namespace {

/// Deepest nesting of blocks (kernel body included) the parser accepts.
constexpr unsigned MaxBlockDepth = 256;

class Parser {
public:
  Parser(llvm::StringRef Text, llvm::StringRef FileName)
      : Lex(Text), File(FileName) {
    consume();
  }

  llvm::Expected<Module> run();

private:
  // Token handling. Every parse function returns true on error, after
  // recording the diagnostic in Diag (the first one wins).
  void consume() { Tok = Lex.next(); }
  bool is(TokenKind K) const { return Tok.Kind == K; }
  bool isWord(llvm::StringRef W) const {
    return Tok.Kind == TokenKind::Word && Tok.Text == W;
  }
  bool error(SourceLoc Loc, const llvm::Twine &Message);
  bool errorHere(const llvm::Twine &Message);
  bool expect(TokenKind K, llvm::StringRef What);
  bool expectWord(llvm::StringRef W);
  std::string describeToken() const;

  // Names.
  bool defineValue(IRKernel &K, llvm::StringRef Name, SourceLoc Loc,
                   ValueInfo Info, ValueId &Id);
  bool lookupValue(llvm::StringRef Name, SourceLoc Loc, ValueId &Id);

  // Grammar.
  bool parseKernel(IRKernel &K);
  bool parseUInt32(uint32_t &Value, llvm::StringRef What);
  /// `cluster_dim(X[, Y[, Z]])` (docs/LangRef.md §15), at its keyword.
  bool parseClusterDim(IRKernel &K);
  /// The sizes of `cube_dim(...)` or `cluster_dim(...)` after the '(' up to
  /// and including the ')': 1 to 3 of them.
  bool parseDims(llvm::StringRef Attr, std::array<uint32_t, 3> &Dims,
                 uint8_t &Rank);
  bool parseType(Type &Ty);
  bool parseParam(IRKernel &K);
  bool parseBlock(IRKernel &K, Block &B);
  bool parseStatement(IRKernel &K, Block &B);
  bool parseValueStatement(IRKernel &K, Block &B);
  bool parseOpName(Operation &Op);
  bool parseOperand(IRKernel &K, Operand &O);
  bool parseLiteralOperand(Operand &O);
  /// After "TEXT:", parses the literal's scalar type and converts TEXT into
  /// \p Out. \p What names the literal in the error for a line type ("a
  /// literal operand", "an index").
  bool parseTypedLiteral(const Token &Text, llvm::StringRef What,
                         Literal &Out);
  bool parseIndexedOperand(IRKernel &K, Operation &Op);
  /// The index between brackets: a value, a typed literal, or a bare
  /// integer (a u32 literal).
  bool parseIndex(IRKernel &K, Operand &Index);
  /// Operands of the shape bracketedOperandShape gives (memcpy_async).
  bool parseBracketedOperands(IRKernel &K, Operation &Op);
  /// `%b = barrier_unit`, `%b = barrier_cube %count`.
  bool parseBarrierDecl(IRKernel &K, Operation &Op, ValueInfo &Info);
  bool parseOperands(IRKernel &K, Operation &Op);
  bool parseIm2colOperands(IRKernel &K, Operation &Op);
  bool parseTensorMapMode(ValueInfo &Info);
  bool parseConst(Operation &Op);
  bool parseIf(IRKernel &K, Operation &Op);
  bool parseFor(IRKernel &K, Operation &Op);
  bool parseSwitch(IRKernel &K, Operation &Op);
  /// `matrix<USE, MxNxK, ELEM[, LAYOUT]>` (docs/LangRef.md §5.4).
  bool parseMatrixType(MatrixType &T);
  /// The operands of a cmma operation, after its name.
  bool parseCmma(IRKernel &K, Operation &Op);
  /// `"FORMAT"` and the operands of debug_print, after its name.
  bool parseDebugPrint(IRKernel &K, Operation &Op);
  /// `, row` or `, col` after the stride of cmma_load/cmma_store, if any.
  bool parseOptionalLayout(Operation &Op);
  Type operandType(const IRKernel &K, const Operand &O) const;

  Lexer Lex;
  Token Tok;
  std::string File;
  std::optional<Diagnostic> Diag;
  std::vector<llvm::StringMap<ValueId>> Scopes;
  unsigned Depth = 0;
};

} // namespace

bool Parser::error(SourceLoc Loc, const llvm::Twine &Message) {
  if (!Diag) {
    Diag.emplace();
    Diag->File = File;
    Diag->Loc = Loc;
    Diag->Message = Message.str();
  }
  return true;
}

bool Parser::errorHere(const llvm::Twine &Message) {
  if (is(TokenKind::Error))
    return error(Tok.Loc, Tok.Message);
  return error(Tok.Loc, Message);
}

std::string Parser::describeToken() const {
  switch (Tok.Kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::ValueName:
    return "'%" + Tok.Text.str() + "'";
  case TokenKind::GlobalName:
    return "'@" + Tok.Text.str() + "'";
  case TokenKind::String:
    return "a string literal";
  default:
    // Long words are cut so that a diagnostic stays one readable line.
    if (Tok.Text.size() > 40)
      return "'" + Tok.Text.take_front(40).str() + "...'";
    return "'" + Tok.Text.str() + "'";
  }
}

bool Parser::expect(TokenKind K, llvm::StringRef What) {
  if (!is(K))
    return errorHere("expected " + What + ", found " + describeToken());
  consume();
  return false;
}

bool Parser::expectWord(llvm::StringRef W) {
  if (!isWord(W))
    return errorHere("expected '" + W + "', found " + describeToken());
  consume();
  return false;
}

bool Parser::defineValue(IRKernel &K, llvm::StringRef Name, SourceLoc Loc,
                         ValueInfo Info, ValueId &Id) {
  for (const auto &Scope : Scopes)
    if (Scope.count(Name))
      return error(Loc, "redefinition of '%" + Name + "'");
  Info.Name = Name.str();
  Info.Loc = Loc;
  Id = K.addValue(std::move(Info));
  Scopes.back()[Name] = Id;
  return false;
}

bool Parser::lookupValue(llvm::StringRef Name, SourceLoc Loc, ValueId &Id) {
  for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It) {
    auto Found = It->find(Name);
    if (Found != It->end()) {
      Id = Found->second;
      return false;
    }
  }
  return error(Loc, "use of undefined value '%" + Name + "'");
}

llvm::Expected<Module> Parser::run() {
  Module M;
  M.FileName = File;
  while (!is(TokenKind::Eof)) {
    IRKernel K;
    if (parseKernel(K))
      break;
    M.Kernels.push_back(std::move(K));
  }
  if (Diag)
    return llvm::make_error<DiagnosticError>(std::vector<Diagnostic>{*Diag});
  return M;
}

bool Parser::parseUInt32(uint32_t &Value, llvm::StringRef What) {
  if (!is(TokenKind::Word))
    return errorHere("expected " + What + ", found " + describeToken());
  llvm::Expected<uint64_t> Bits = parseLiteral(Tok.Text, ScalarKind::U32);
  if (!Bits) {
    llvm::consumeError(Bits.takeError());
    return errorHere("expected " + What + " (an unsigned 32-bit integer), "
                     "found " + describeToken());
  }
  Value = static_cast<uint32_t>(*Bits);
  consume();
  return false;
}

bool Parser::parseKernel(IRKernel &K) {
  K.Loc = Tok.Loc;
  if (!isWord("kernel"))
    return errorHere("expected 'kernel', found " + describeToken());
  consume();
  if (!is(TokenKind::GlobalName))
    return errorHere("expected a kernel name '@name', found " +
                     describeToken());
  K.Name = Tok.Text.str();
  consume();

  if (expectWord("cube_dim") || expect(TokenKind::LParen, "'('") ||
      parseDims("cube_dim", K.CubeDim, K.CubeDimRank))
    return true;

  while (is(TokenKind::Word)) {
    if (Tok.Text == "cluster_dim") {
      if (parseClusterDim(K))
        return true;
      continue;
    }
    if (Tok.Text != "plane_dim")
      return errorHere("unknown kernel attribute " + describeToken());
    if (K.PlaneDim)
      return errorHere("plane_dim given twice");
    consume();
    uint32_t N;
    if (expect(TokenKind::LParen, "'('") || parseUInt32(N, "a plane size") ||
        expect(TokenKind::RParen, "')'"))
      return true;
    K.PlaneDim = N;
  }

  Scopes.clear();
  Scopes.emplace_back();
  if (expect(TokenKind::LParen, "'(' before the parameters"))
    return true;
  if (!is(TokenKind::RParen)) {
    for (;;) {
      if (parseParam(K))
        return true;
      if (is(TokenKind::RParen))
        break;
      if (expect(TokenKind::Comma, "',' or ')'"))
        return true;
    }
  }
  consume();
  return parseBlock(K, K.Body);
}

bool Parser::parseClusterDim(IRKernel &K) {
  if (K.ClusterDimRank)
    return errorHere("cluster_dim given twice");
  consume();
  return expect(TokenKind::LParen, "'(' after 'cluster_dim'") ||
         parseDims("cluster_dim", K.ClusterDim, K.ClusterDimRank);
}

bool Parser::parseDims(llvm::StringRef Attr, std::array<uint32_t, 3> &Dims,
                       uint8_t &Rank) {
  Rank = 0;
  for (;;) {
    if (Rank == 3)
      return errorHere(Attr + " takes at most 3 dimensions");
    if (parseUInt32(Dims[Rank], ("a " + Attr + " size").str()))
      return true;
    ++Rank;
    if (is(TokenKind::RParen))
      break;
    if (expect(TokenKind::Comma, "',' or ')'"))
      return true;
  }
  consume();
  return false;
}

bool Parser::parseType(Type &Ty) {
  if (!is(TokenKind::Word))
    return errorHere("expected a type, found " + describeToken());
  if (Tok.Text != "vec") {
    std::optional<ScalarKind> Kind = parseScalarName(Tok.Text);
    if (!Kind)
      return errorHere("unknown type " + describeToken());
    Ty = Type::scalar(*Kind);
    consume();
    return false;
  }
  consume();
  if (expect(TokenKind::Less, "'<' after 'vec'"))
    return true;
  if (!is(TokenKind::Word))
    return errorHere("expected a line width, found " + describeToken());
  SourceLoc WidthLoc = Tok.Loc;
  llvm::StringRef WidthText = Tok.Text;
  llvm::Expected<uint64_t> Width = parseLiteral(WidthText, ScalarKind::U64);
  if (!Width) {
    llvm::consumeError(Width.takeError());
    return errorHere("expected a line width, found " + describeToken());
  }
  if (!Type::isValidLineWidth(*Width))
    return error(WidthLoc, "invalid line width " + WidthText +
                               ": expected 1, 2, 3, 4, 8 or 16");
  consume();
  if (expectWord("x"))
    return true;
  if (!is(TokenKind::Word))
    return errorHere("expected an element type, found " + describeToken());
  std::optional<ScalarKind> Kind = parseScalarName(Tok.Text);
  if (!Kind)
    return errorHere("expected a scalar element type, found " +
                     describeToken());
  consume();
  if (expect(TokenKind::Greater, "'>' to close the line type"))
    return true;
  Ty = Type::line(*Kind, static_cast<unsigned>(*Width));
  return false;
}

bool Parser::parseParam(IRKernel &K) {
  if (!is(TokenKind::ValueName))
    return errorHere("expected a parameter '%name', found " + describeToken());
  llvm::StringRef Name = Tok.Text;
  SourceLoc Loc = Tok.Loc;
  consume();
  if (expect(TokenKind::Colon, "':' after the parameter name"))
    return true;
  ValueInfo Info;
  if (isWord("buffer") || isWord("tensor_map")) {
    // tensor_map<T, ACCESS> (docs/LangRef.md §17) is written as a buffer is.
    std::string What = Tok.Text.str();
    Info.IsTensorMap = What == "tensor_map";
    consume();
    Info.Kind = ValueKind::Buffer;
    if (expect(TokenKind::Less, "'<' after '" + What + "'") ||
        parseType(Info.Ty) ||
        expect(TokenKind::Comma, "',' after the " +
                                     (Info.IsTensorMap ? "tensor map"
                                                       : std::string("buffer")) +
                                     " element type"))
      return true;
    std::optional<AccessKind> Access =
        is(TokenKind::Word) ? parseAccessName(Tok.Text) : std::nullopt;
    if (!Access)
      return errorHere("expected an access mode (read, write or read_write), "
                       "found " + describeToken());
    Info.Access = *Access;
    consume();
    if (Info.IsTensorMap && parseTensorMapMode(Info))
      return true;
    if (expect(TokenKind::Greater, "'>' to close the " + What + " type"))
      return true;
  } else if (parseType(Info.Ty)) {
    return true;
  }
  ValueId Id;
  if (defineValue(K, Name, Loc, std::move(Info), Id))
    return true;
  K.Params.push_back(Id);
  return false;
}

bool Parser::parseBlock(IRKernel &K, Block &B) {
  if (!is(TokenKind::LBrace))
    return errorHere("expected '{', found " + describeToken());
  if (Depth >= MaxBlockDepth)
    return errorHere("blocks nested deeper than " +
                     llvm::Twine(MaxBlockDepth) + " levels");
  consume();
  ++Depth;
  Scopes.emplace_back();
  bool Failed = false;
  while (!is(TokenKind::RBrace)) {
    if (is(TokenKind::Eof)) {
      Failed = errorHere("expected '}' before end of file");
      break;
    }
    if (parseStatement(K, B)) {
      Failed = true;
      break;
    }
  }
  Scopes.pop_back();
  --Depth;
  if (Failed)
    return true;
  consume();
  return false;
}

Type Parser::operandType(const IRKernel &K, const Operand &O) const {
  if (O.isLiteral())
    return O.Lit.Ty;
  return K.Values[O.Value].Ty;
}

bool Parser::parseStatement(IRKernel &K, Block &B) {
  if (is(TokenKind::ValueName))
    return parseValueStatement(K, B);
  if (!is(TokenKind::Word))
    return errorHere("expected a statement, found " + describeToken());

  Operation Op;
  Op.Loc = Tok.Loc;
  if (parseOpName(Op))
    return true;
  switch (Op.opClass()) {
  case OpClass::If:
    if (parseIf(K, Op))
      return true;
    break;
  case OpClass::For:
    if (parseFor(K, Op))
      return true;
    break;
  case OpClass::Switch:
    if (parseSwitch(K, Op))
      return true;
    break;
  case OpClass::Loop:
    Op.Regions.emplace_back();
    if (parseBlock(K, Op.Regions[0]))
      return true;
    break;
  case OpClass::Jump:
  case OpClass::Barrier:
    break;
  case OpClass::Store:
  case OpClass::AtomicStore:
  case OpClass::Set:
  case OpClass::BarrierExpectTx:
  case OpClass::BarrierWait:
    if (parseOperands(K, Op))
      return true;
    break;
  case OpClass::AsyncCopy:
    if (parseBracketedOperands(K, Op))
      return true;
    break;
  case OpClass::TensorCopy:
    if (Op.Kind == OpKind::TmaLoadIm2col ? parseIm2colOperands(K, Op)
                                         : parseOperands(K, Op))
      return true;
    break;
  case OpClass::TensorStoreGroup:
    // tma_commit takes no operand; tma_wait_read and tma_wait take one.
    if (Op.Kind != OpKind::TmaCommit && parseOperands(K, Op))
      return true;
    break;
  case OpClass::Cmma:
    if (parseCmma(K, Op))
      return true;
    break;
  case OpClass::CmmaSet:
    if (parseOperands(K, Op))
      return true;
    break;
  case OpClass::DebugPrint:
    if (parseDebugPrint(K, Op))
      return true;
    break;
  case OpClass::VarDecl:
  case OpClass::ArrayDecl:
  case OpClass::BarrierDecl:
  case OpClass::MatrixDecl:
    return error(Op.Loc, "'" + opName(Op.Kind) +
                             "' declares a value: write '%name = " +
                             opName(Op.Kind) + " ...'");
  default:
    return error(Op.Loc, "'" + opName(Op.Kind) +
                             "' produces a value: write '%name = " +
                             opName(Op.Kind) + " ... : TYPE'");
  }
  B.Ops.push_back(std::move(Op));
  return false;
}

bool Parser::parseOpName(Operation &Op) {
  if (!is(TokenKind::Word))
    return errorHere("expected an operation, found " + describeToken());
  llvm::StringRef Text = Tok.Text;
  auto [Name, Suffix] = Text.split('.');
  std::optional<OpKind> Kind = kiln::parseOpName(Name);
  if (!Kind)
    return errorHere("unknown operation " + describeToken());
  Op.Kind = *Kind;
  if (Text.contains('.')) {
    if (Op.opClass() != OpClass::BuiltinXYZ)
      return errorHere("operation '" + Name + "' takes no component suffix");
    if (Suffix == "x")
      Op.Component = 1;
    else if (Suffix == "y")
      Op.Component = 2;
    else if (Suffix == "z")
      Op.Component = 3;
    else
      return errorHere("unknown component '." + Suffix +
                       "': expected .x, .y or .z");
  }
  consume();
  return false;
}

bool Parser::parseValueStatement(IRKernel &K, Block &B) {
  llvm::StringRef Name = Tok.Text;
  SourceLoc NameLoc = Tok.Loc;
  consume();
  if (expect(TokenKind::Equal, "'=' after '%" + Name.str() + "'"))
    return true;
  Operation Op;
  Op.Loc = Tok.Loc;
  if (parseOpName(Op))
    return true;
  OpClass Class = Op.opClass();
  ValueInfo Info;

  if (Class == OpClass::BarrierDecl) {
    if (parseBarrierDecl(K, Op, Info))
      return true;
  } else if (Class == OpClass::MatrixDecl) {
    if (parseMatrixType(Op.Matrix))
      return true;
    Op.ResultType = Type::scalar(Op.Matrix.Elem);
    Info.Kind = ValueKind::Fragment;
    Info.Ty = Op.ResultType;
    Info.Matrix = Op.Matrix;
  } else if (Class == OpClass::VarDecl || Class == OpClass::ArrayDecl) {
    if (parseType(Op.ResultType))
      return true;
    Info.Ty = Op.ResultType;
    if (Class == OpClass::VarDecl) {
      Info.Kind = ValueKind::Var;
    } else {
      Info.Kind = Op.Kind == OpKind::Shared ? ValueKind::Shared
                                            : ValueKind::Local;
      if (expect(TokenKind::LSquare, "'[' and the element count"))
        return true;
      if (!is(TokenKind::Word))
        return errorHere("expected an element count, found " +
                         describeToken());
      llvm::Expected<uint64_t> Count = parseLiteral(Tok.Text, ScalarKind::U64);
      if (!Count) {
        llvm::consumeError(Count.takeError());
        return errorHere("expected an element count (an unsigned 64-bit "
                         "integer), found " + describeToken());
      }
      Op.ArraySize = Info.Count = *Count;
      consume();
      if (expect(TokenKind::RSquare, "']'"))
        return true;
    }
  } else {
    if (!producesValue(Class) || Class == OpClass::For)
      return error(Op.Loc, "'" + opName(Op.Kind) + "' does not produce a value");
    if (Class == OpClass::Const) {
      if (parseConst(Op))
        return true;
    } else {
      // Operands start with a name or a literal; anything else is a missing
      // result type, which is the likelier mistake.
      if ((is(TokenKind::ValueName) || is(TokenKind::Word)) &&
          parseOperands(K, Op))
        return true;
      if (expect(TokenKind::Colon, "':' and the result type") ||
          parseType(Op.ResultType))
        return true;
      splatScalarLiterals(Op, [&](ValueId Id) -> std::optional<Type> {
        if (Id < K.Values.size())
          return K.Values[Id].Ty;
        return std::nullopt;
      });
    }
    Info.Ty = Op.ResultType;
  }
  if (defineValue(K, Name, NameLoc, std::move(Info), Op.Result))
    return true;
  B.Ops.push_back(std::move(Op));
  return false;
}

bool Parser::parseDebugPrint(IRKernel &K, Operation &Op) {
  if (!is(TokenKind::String))
    return errorHere("expected a format string literal \"...\" after "
                     "'debug_print', found " + describeToken());
  Op.Text = Tok.Decoded;
  consume();
  while (is(TokenKind::Comma)) {
    consume();
    Operand O;
    if (parseOperand(K, O))
      return true;
    Op.Operands.push_back(O);
  }
  return false;
}

bool Parser::parseConst(Operation &Op) {
  // The literals come before their type, so keep their text until the type
  // is known.
  std::vector<Token> Lanes;
  bool Bracketed = is(TokenKind::LSquare);
  if (Bracketed) {
    consume();
    for (;;) {
      if (!is(TokenKind::Word))
        return errorHere("expected a literal, found " + describeToken());
      Lanes.push_back(Tok);
      consume();
      if (is(TokenKind::RSquare))
        break;
      if (expect(TokenKind::Comma, "',' or ']'"))
        return true;
    }
    consume();
  } else {
    if (!is(TokenKind::Word))
      return errorHere("expected a literal, found " + describeToken());
    Lanes.push_back(Tok);
    consume();
  }
  if (expect(TokenKind::Colon, "':' and the constant's type"))
    return true;
  SourceLoc TypeLoc = Tok.Loc;
  if (parseType(Op.ResultType))
    return true;
  const Type &Ty = Op.ResultType;
  if (Ty.isLine() && (!Bracketed || Lanes.size() != Ty.lanes()))
    return error(TypeLoc, "a constant of type '" + Ty.str() + "' needs " +
                              llvm::Twine(Ty.lanes()) +
                              " lanes in brackets, found " +
                              llvm::Twine(Lanes.size()) +
                              (Bracketed ? "" : " without brackets"));
  if (!Ty.isLine() && Bracketed)
    return error(TypeLoc, "a constant of scalar type '" + Ty.str() +
                              "' takes one literal without brackets");
  for (const Token &Lane : Lanes) {
    llvm::Expected<uint64_t> Bits = parseLiteral(Lane.Text, Ty.elementKind());
    if (!Bits)
      return error(Lane.Loc, llvm::toString(Bits.takeError()));
    Op.ConstBits.push_back(*Bits);
  }
  return false;
}

bool Parser::parseLiteralOperand(Operand &O) {
  Token Text = Tok;
  O.Loc = Tok.Loc;
  consume();
  if (!is(TokenKind::Colon))
    return error(Text.Loc, "literal '" + Text.Text.take_front(40) +
                               "' needs a type: write it as '" +
                               Text.Text.take_front(40) + ":TYPE'");
  consume();
  if (parseTypedLiteral(Text, "a literal operand", O.Lit))
    return true;
  O.Value = NoValue;
  return false;
}

bool Parser::parseTypedLiteral(const Token &Text, llvm::StringRef What,
                               Literal &Out) {
  Type Ty;
  SourceLoc TypeLoc = Tok.Loc;
  if (parseType(Ty))
    return true;
  if (Ty.isLine())
    return error(TypeLoc, What + " must have a scalar type, found '" +
                              Ty.str() + "'");
  llvm::Expected<uint64_t> Bits = parseLiteral(Text.Text, Ty.elementKind());
  if (!Bits)
    return error(Text.Loc, llvm::toString(Bits.takeError()));
  Out = Literal{Ty, *Bits};
  return false;
}

bool Parser::parseOperand(IRKernel &K, Operand &O) {
  if (is(TokenKind::ValueName)) {
    O.Loc = Tok.Loc;
    if (lookupValue(Tok.Text, Tok.Loc, O.Value))
      return true;
    consume();
    return false;
  }
  if (is(TokenKind::Word))
    return parseLiteralOperand(O);
  return errorHere("expected an operand, found " + describeToken());
}

bool Parser::parseIndexedOperand(IRKernel &K, Operation &Op) {
  if (!is(TokenKind::ValueName))
    return errorHere("expected '%name[index]' as the first operand of '" +
                     opName(Op.Kind) + "', found " + describeToken());
  Operand Base;
  if (parseOperand(K, Base))
    return true;
  if (expect(TokenKind::LSquare, "'[' and an index"))
    return true;
  Operand Index;
  if (parseIndex(K, Index))
    return true;
  if (expect(TokenKind::RSquare, "']' after the index"))
    return true;
  Op.Operands.push_back(Base);
  Op.Operands.push_back(Index);
  return false;
}

bool Parser::parseIndex(IRKernel &K, Operand &Index) {
  if (is(TokenKind::Word)) {
    // A bare integer index is a u32 literal; a typed one is a plain literal.
    Token Text = Tok;
    Index.Loc = Tok.Loc;
    consume();
    if (is(TokenKind::Colon)) {
      consume();
      if (parseTypedLiteral(Text, "an index", Index.Lit))
        return true;
    } else {
      llvm::Expected<uint64_t> Bits = parseLiteral(Text.Text, ScalarKind::U32);
      if (!Bits)
        return error(Text.Loc, llvm::toString(Bits.takeError()));
      Index.Lit = Literal{Type::scalar(ScalarKind::U32), *Bits};
    }
  } else if (parseOperand(K, Index)) {
    return true;
  }
  return false;
}

bool Parser::parseBracketedOperands(IRKernel &K, Operation &Op) {
  const std::vector<unsigned> &Shape = *bracketedOperandShape(Op.opClass());
  for (size_t G = 0; G < Shape.size(); ++G) {
    if (G && expect(TokenKind::Comma, "',' and operand " +
                                          std::to_string(G + 1) + " of '" +
                                          opName(Op.Kind).str() + "'"))
      return true;
    Operand O;
    if (parseOperand(K, O))
      return true;
    Op.Operands.push_back(O);
    if (Shape[G] == 0)
      continue;
    if (expect(TokenKind::LSquare, "'[' and the offset of operand " +
                                       std::to_string(G + 1) + " of '" +
                                       opName(Op.Kind).str() + "'"))
      return true;
    for (unsigned I = 0; I < Shape[G]; ++I) {
      if (I && expect(TokenKind::Comma, "',' and the next index"))
        return true;
      Operand Index;
      if (parseIndex(K, Index))
        return true;
      Op.Operands.push_back(Index);
    }
    if (expect(TokenKind::RSquare, "']' after the index"))
      return true;
  }
  return false;
}

bool Parser::parseBarrierDecl(IRKernel &K, Operation &Op, ValueInfo &Info) {
  Info.IsBarrier = true;
  Info.Ty = Op.ResultType = Type::scalar(ScalarKind::U32);
  Info.Count = Op.ArraySize = BarrierStateWords;
  if (Op.Kind == OpKind::BarrierUnit) {
    Info.Kind = ValueKind::Local;
    return false;
  }
  Info.Kind = ValueKind::Shared;
  Operand Count;
  if (parseOperand(K, Count))
    return true;
  Op.Operands.push_back(Count);
  return false;
}

bool Parser::parseOperands(IRKernel &K, Operation &Op) {
  if (hasIndexedFirstOperand(Op.opClass())) {
    if (parseIndexedOperand(K, Op))
      return true;
    if (!is(TokenKind::Comma))
      return false;
    consume();
  }
  for (;;) {
    Operand O;
    if (parseOperand(K, O))
      return true;
    Op.Operands.push_back(O);
    if (!is(TokenKind::Comma))
      return false;
    consume();
  }
}

bool Parser::parseTensorMapMode(ValueInfo &Info) {
  // An optional third word: `tiled` (the default) or `im2col` (§17.7).
  if (!is(TokenKind::Comma))
    return false;
  consume();
  if (isWord("tiled") || isWord("im2col")) {
    Info.IsIm2col = Tok.Text == "im2col";
    consume();
    return false;
  }
  return errorHere("expected a tensor map mode (tiled or im2col), found " +
                   describeToken());
}

bool Parser::parseIm2colOperands(IRKernel &K, Operation &Op) {
  // tma_load_im2col %bar, %smem, %off, %map, %c0, ... offsets %o0, ...
  if (parseOperands(K, Op))
    return true;
  size_t Fixed = std::min<size_t>(Op.Operands.size(), 4);
  size_t Coords = Op.Operands.size() - Fixed;
  if (!isWord("offsets"))
    return errorHere("expected 'offsets' and the im2col offsets after the "
                     "coordinates of 'tma_load_im2col', found " +
                     describeToken());
  SourceLoc Loc = Tok.Loc;
  consume();
  if (parseOperands(K, Op))
    return true;
  size_t Offsets = Op.Operands.size() - Fixed - Coords;
  if (Offsets + 2 != Coords)
    return error(Loc, "tma_load_im2col gives " + std::to_string(Coords) +
                          " coordinate(s) and " + std::to_string(Offsets) +
                          " offset(s); it takes one offset per spatial "
                          "dimension, two fewer than the coordinates");
  return false;
}

bool Parser::parseIf(IRKernel &K, Operation &Op) {
  Operand Cond;
  if (parseOperand(K, Cond))
    return true;
  Op.Operands.push_back(Cond);
  Op.Regions.emplace_back();
  if (parseBlock(K, Op.Regions[0]))
    return true;
  if (isWord("else")) {
    consume();
    Op.HasElse = true;
    Op.Regions.emplace_back();
    if (parseBlock(K, Op.Regions[1]))
      return true;
  }
  return false;
}

bool Parser::parseFor(IRKernel &K, Operation &Op) {
  if (!is(TokenKind::ValueName))
    return errorHere("expected the induction variable '%name' after 'for', "
                     "found " + describeToken());
  llvm::StringRef Name = Tok.Text;
  SourceLoc NameLoc = Tok.Loc;
  consume();
  Operand Lo, Hi, Step;
  if (expect(TokenKind::Equal, "'=' after the induction variable") ||
      parseOperand(K, Lo) || expectWord("to") || parseOperand(K, Hi))
    return true;
  Op.Operands = {Lo, Hi};
  if (isWord("step")) {
    consume();
    if (parseOperand(K, Step))
      return true;
    Op.Operands.push_back(Step);
  }
  Op.ResultType = operandType(K, Lo);
  // The induction variable is visible in the body only.
  Scopes.emplace_back();
  ValueInfo Info;
  Info.Ty = Op.ResultType;
  bool Failed = defineValue(K, Name, NameLoc, std::move(Info), Op.Result);
  if (!Failed) {
    Op.Regions.emplace_back();
    Failed = parseBlock(K, Op.Regions[0]);
  }
  Scopes.pop_back();
  return Failed;
}

bool Parser::parseSwitch(IRKernel &K, Operation &Op) {
  Operand Selector;
  if (parseOperand(K, Selector))
    return true;
  Op.Operands.push_back(Selector);
  if (expect(TokenKind::LBrace, "'{' after the switch selector"))
    return true;
  while (!is(TokenKind::RBrace)) {
    if (Op.HasDefault)
      return errorHere("expected '}' after the default case, found " +
                       describeToken());
    if (isWord("case")) {
      consume();
      // `case 1, 3, 5 {`: one or more labels, comma-separated.
      std::vector<CaseLabel> Labels;
      do {
        if (!Labels.empty())
          consume(); // the ','
        if (!is(TokenKind::Word))
          return errorHere("expected a case value, found " + describeToken());
        llvm::Expected<CaseLabel> Value = parseCaseValue(Tok.Text);
        if (!Value)
          return errorHere(llvm::toString(Value.takeError()));
        if (llvm::is_contained(Op.CaseValues, *Value) ||
            llvm::is_contained(Labels, *Value))
          return errorHere("duplicate case value " + Value->str());
        consume();
        Labels.push_back(*Value);
      } while (is(TokenKind::Comma));
      addSwitchCase(Op, Labels);
    } else if (isWord("default")) {
      consume();
      Op.HasDefault = true;
      Op.Regions.emplace_back();
    } else {
      return errorHere("expected 'case', 'default' or '}', found " +
                       describeToken());
    }
    if (parseBlock(K, Op.Regions.back()))
      return true;
  }
  consume();
  return false;
}

bool Parser::parseMatrixType(MatrixType &T) {
  if (expectWord("matrix") || expect(TokenKind::Less, "'<' after 'matrix'"))
    return true;
  std::optional<MatrixUse> Use =
      is(TokenKind::Word) ? parseMatrixUse(Tok.Text) : std::nullopt;
  if (!Use)
    return errorHere("expected a fragment use (a, b or accumulator), found " +
                     describeToken());
  T.Use = *Use;
  consume();
  if (expect(TokenKind::Comma, "',' after the fragment use"))
    return true;
  if (!is(TokenKind::Word) || !parseMatrixShape(Tok.Text, T.M, T.N, T.K))
    return errorHere("expected a fragment shape MxNxK such as 16x16x16, "
                     "found " + describeToken());
  consume();
  if (expect(TokenKind::Comma, "',' after the fragment shape"))
    return true;
  std::optional<ScalarKind> Elem =
      is(TokenKind::Word) ? parseScalarName(Tok.Text) : std::nullopt;
  if (!Elem)
    return errorHere("expected the fragment's element type, found " +
                     describeToken());
  T.Elem = *Elem;
  consume();
  T.Layout = MatrixLayout::Undefined;
  T.Scope = MatrixScope::Plane;
  if (is(TokenKind::Comma)) {
    consume();
    // A layout, then the scope; or the scope alone.
    std::optional<MatrixLayout> Layout =
        is(TokenKind::Word) ? parseMatrixLayout(Tok.Text) : std::nullopt;
    bool Cube = is(TokenKind::Word) && Tok.Text == "cube";
    if (!Layout && !Cube)
      return errorHere("expected a layout (row or col) or 'cube', found " +
                       describeToken());
    if (Layout) {
      T.Layout = *Layout;
      consume();
      if (is(TokenKind::Comma)) {
        consume();
        Cube = is(TokenKind::Word) && Tok.Text == "cube";
        if (!Cube)
          return errorHere("expected 'cube' after the layout, found " +
                           describeToken());
      }
    }
    if (Cube) {
      T.Scope = MatrixScope::Cube;
      consume();
    }
  }
  return expect(TokenKind::Greater, "'>' to close the fragment type");
}

bool Parser::parseOptionalLayout(Operation &Op) {
  if (!is(TokenKind::Comma))
    return false;
  consume();
  std::optional<MatrixLayout> Layout =
      is(TokenKind::Word) ? parseMatrixLayout(Tok.Text) : std::nullopt;
  if (!Layout)
    return errorHere("expected a layout (row or col), found " +
                     describeToken());
  Op.Layout = *Layout;
  consume();
  return false;
}

bool Parser::parseCmma(IRKernel &K, Operation &Op) {
  // Plain operands separated by commas; cmma_load and cmma_store hold one
  // indexed operand `%m[idx]` and may end with a layout.
  auto Plain = [&](bool Comma) {
    Operand O;
    if ((Comma && expect(TokenKind::Comma, "','")) || parseOperand(K, O))
      return true;
    Op.Operands.push_back(O);
    return false;
  };
  switch (Op.Kind) {
  case OpKind::CmmaFill:
  case OpKind::CmmaCast:
    return Plain(false) || Plain(true);
  case OpKind::CmmaMma:
    return Plain(false) || Plain(true) || Plain(true) || Plain(true);
  case OpKind::CmmaMmaScaled:
    return Plain(false) || Plain(true) || Plain(true) || Plain(true) ||
           Plain(true) || Plain(true);
  case OpKind::CmmaLoad:
    if (Plain(false) || expect(TokenKind::Comma, "','"))
      return true;
    if (!is(TokenKind::ValueName))
      return errorHere("expected '%name[index]' as the memory operand of "
                       "'cmma_load', found " + describeToken());
    return parseIndexedOperand(K, Op) || Plain(true) ||
           parseOptionalLayout(Op);
  case OpKind::CmmaStore:
    return parseIndexedOperand(K, Op) || Plain(true) || Plain(true) ||
           parseOptionalLayout(Op);
  case OpKind::CmmaLdmatrix:
    if (Plain(false) || expect(TokenKind::Comma, "','"))
      return true;
    if (!is(TokenKind::ValueName))
      return errorHere("expected '%name[index]' as the memory operand of "
                       "'cmma_ldmatrix', found " + describeToken());
    if (parseIndexedOperand(K, Op))
      return true;
    if (is(TokenKind::Comma)) {
      consume();
      if (!is(TokenKind::Word) || Tok.Text != "trans")
        return errorHere("expected 'trans' after the memory operand of "
                         "'cmma_ldmatrix', found " + describeToken());
      Op.Transpose = true;
      consume();
    }
    return false;
  default:
    return error(Op.Loc, "'" + opName(Op.Kind) + "' is not a cmma operation");
  }
}

llvm::Expected<Module> kiln::parseModule(llvm::StringRef Text,
                                         llvm::StringRef FileName) {
  return Parser(Text, FileName).run();
}
