// #if arithmetic over the macros known so far (PreprocessorConditions.h).
#include "core/frontend/PreprocessorConditions.h"

#include <array>
#include <cctype>
#include <set>
#include <vector>

namespace stitch::frontend {

void MacroTable::define(const std::string &name, std::string body)
{
    m_macros[name] = {Status::Defined, false, std::move(body)};
}

void MacroTable::defineFunctionLike(const std::string &name)
{
    m_macros[name] = {Status::Defined, true, {}};
}

void MacroTable::undefine(const std::string &name)
{
    m_macros[name] = {Status::Undefined, false, {}};
}

void MacroTable::setUnknown(const std::string &name)
{
    m_macros[name] = {Status::Unknown, false, {}};
}

MacroTable::Status MacroTable::status(const std::string &name) const
{
    if (const auto it = m_macros.find(name); it != m_macros.end())
        return it->second.status;
    return systemName(name) ? Status::Unknown : Status::Undefined;
}

std::optional<std::string> MacroTable::body(const std::string &name) const
{
    const auto it = m_macros.find(name);
    if (it == m_macros.end() || it->second.status != Status::Defined || it->second.functionLike)
        return std::nullopt;
    return it->second.body;
}

bool MacroTable::functionLike(const std::string &name) const
{
    const auto it = m_macros.find(name);
    return it != m_macros.end() && it->second.status == Status::Defined && it->second.functionLike;
}

bool MacroTable::systemName(std::string_view name)
{
    // Reserved names (the compiler's: __CUDA_ARCH__, __cplusplus, _WIN32) and the prefixes of the
    // macros the CUDA toolkit's and the C library's headers define.
    if (name.size() >= 2 && name[0] == '_' && (name[1] == '_' || std::isupper(static_cast<unsigned char>(name[1]))))
        return true;
    static constexpr std::array prefixes{"CUDA",  "CUDART", "CU_",   "CUBLAS", "CURAND", "CUFFT", "CUSPARSE", "CUSOLVER",
                                         "CUTLASS", "NV",   "THRUST", "CUB_",  "FLT_",   "DBL_",  "LDBL_",    "INT",
                                         "UINT",  "LLONG",  "ULLONG", "LONG_", "ULONG_", "SHRT_", "USHRT_",   "CHAR_",
                                         "SCHAR_", "UCHAR_", "SIZE_", "PTRDIFF_", "WCHAR_", "EXIT_", "RAND_MAX", "NULL",
                                         "EOF",   "BUFSIZ", "M_",    "HUGE_VAL", "INFINITY", "NAN", "MATH_",   "FP_",
                                         "ERANGE", "EDOM",  "CLOCKS_PER_SEC", "TIME_UTC", "WIN32", "linux", "unix", "NDEBUG"};
    for (std::string_view p : prefixes) {
        if (name.substr(0, p.size()) == p)
            return true;
    }
    return false;
}

namespace {

struct Token {
    enum class Kind { Number, Unknown, Op, End } kind = Kind::End;
    long long value = 0;
    std::string op;
};

class Lexer {
public:
    Lexer(const MacroTable &macros) : m_macros(macros) {}

    /// Tokens of text with object-like macros expanded; false when text holds what #if cannot.
    bool tokenize(std::string_view s, std::vector<Token> &out, std::set<std::string> &expanding)
    {
        std::size_t i = 0;
        auto skipSpace = [&] {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
                ++i;
        };
        while (true) {
            skipSpace();
            if (i >= s.size())
                return true;
            const char c = s[i];
            if (std::isdigit(static_cast<unsigned char>(c))) {
                std::size_t n = i;
                while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '\''))
                    ++n;
                const auto value = number(s.substr(i, n - i));
                if (!value)
                    return false;
                out.push_back({Token::Kind::Number, *value, {}});
                i = n;
            } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                std::size_t n = i;
                while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_'))
                    ++n;
                const std::string name(s.substr(i, n - i));
                i = n;
                if (name == "defined") {
                    skipSpace();
                    const bool paren = i < s.size() && s[i] == '(';
                    if (paren) {
                        ++i;
                        skipSpace();
                    }
                    std::size_t e = i;
                    while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_'))
                        ++e;
                    if (e == i)
                        return false;
                    const auto status = m_macros.status(std::string(s.substr(i, e - i)));
                    i = e;
                    if (paren) {
                        skipSpace();
                        if (i >= s.size() || s[i] != ')')
                            return false;
                        ++i;
                    }
                    if (status == MacroTable::Status::Unknown)
                        out.push_back({Token::Kind::Unknown, 0, {}});
                    else
                        out.push_back({Token::Kind::Number, status == MacroTable::Status::Defined ? 1 : 0, {}});
                } else if (name == "true" || name == "false") {
                    out.push_back({Token::Kind::Number, name == "true" ? 1 : 0, {}});
                } else if (m_macros.functionLike(name)) {
                    out.push_back({Token::Kind::Unknown, 0, {}});
                    skipSpace();
                    if (i < s.size() && s[i] == '(') {
                        int depth = 0;
                        for (; i < s.size(); ++i) {
                            depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
                            if (depth == 0) {
                                ++i;
                                break;
                            }
                        }
                    }
                } else if (const auto body = m_macros.body(name)) {
                    if (expanding.count(name) || expanding.size() > 64) {
                        out.push_back({Token::Kind::Unknown, 0, {}});
                    } else {
                        expanding.insert(name);
                        std::vector<Token> inner;
                        const bool ok = tokenize(*body, inner, expanding);
                        expanding.erase(name);
                        if (!ok || inner.empty())
                            return false; // an empty or non-arithmetic macro in #if: the compiler decides
                        // Parenthesized, as substitution inside an expression would need anyway.
                        out.push_back({Token::Kind::Op, 0, "("});
                        out.insert(out.end(), inner.begin(), inner.end());
                        out.push_back({Token::Kind::Op, 0, ")"});
                    }
                } else if (m_macros.status(name) == MacroTable::Status::Unknown) {
                    out.push_back({Token::Kind::Unknown, 0, {}});
                } else {
                    out.push_back({Token::Kind::Number, 0, {}});
                }
            } else {
                static constexpr std::array ops{"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "!", "~", "-",
                                                "+",  "*",  "/",  "%",  "<",  ">",  "&",  "^",  "|",  "?", ":"};
                bool matched = false;
                for (std::string_view op : ops) {
                    if (s.substr(i, op.size()) == op) {
                        out.push_back({Token::Kind::Op, 0, std::string(op)});
                        i += op.size();
                        matched = true;
                        break;
                    }
                }
                if (!matched)
                    return false; // a character literal, a string, '#'...: leave it to the compiler
            }
        }
    }

private:
    static std::optional<long long> number(std::string_view t)
    {
        std::string digits;
        for (char c : t) {
            if (c != '\'')
                digits += c;
        }
        while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
            digits.pop_back();
        int base = 10;
        std::size_t start = 0;
        if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
            base = 16, start = 2;
        else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'b' || digits[1] == 'B'))
            base = 2, start = 2;
        else if (digits.size() > 1 && digits[0] == '0')
            base = 8, start = 1;
        if (start >= digits.size())
            return digits == "0" ? std::optional<long long>(0) : std::nullopt;
        unsigned long long v = 0;
        for (std::size_t k = start; k < digits.size(); ++k) {
            const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[k])));
            const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : 99;
            if (d >= base)
                return std::nullopt;
            v = v * static_cast<unsigned long long>(base) + static_cast<unsigned long long>(d);
        }
        return static_cast<long long>(v);
    }

    const MacroTable &m_macros;
};

using Value = std::optional<long long>;

/// Recursive descent over C's precedence; nullopt values are unknown, and && / || / ?: decide
/// without the unknown side where the known side is enough.
class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : m_tokens(std::move(tokens)) { m_tokens.push_back({}); }

    std::optional<Value> parse()
    {
        const Value v = conditional();
        if (m_bad || peek().kind != Token::Kind::End)
            return std::nullopt;
        return v;
    }

private:
    const Token &peek() const { return m_tokens[m_pos]; }
    bool accept(const char *op)
    {
        if (peek().kind == Token::Kind::Op && peek().op == op) {
            ++m_pos;
            return true;
        }
        return false;
    }

    Value conditional()
    {
        const Value c = logicalOr();
        if (!accept("?"))
            return c;
        const Value a = conditional();
        if (!accept(":"))
            m_bad = true;
        const Value b = conditional();
        if (c)
            return *c ? a : b;
        return a && b && *a == *b ? a : std::nullopt;
    }

    Value logicalOr()
    {
        Value v = logicalAnd();
        while (accept("||")) {
            const Value r = logicalAnd();
            if ((v && *v) || (r && *r))
                v = 1;
            else
                v = v && r ? Value(0) : std::nullopt;
        }
        return v;
    }

    Value logicalAnd()
    {
        Value v = binary(0);
        while (accept("&&")) {
            const Value r = binary(0);
            if ((v && !*v) || (r && !*r))
                v = 0;
            else
                v = v && r ? Value(1) : std::nullopt;
        }
        return v;
    }

    /// Levels: | ^ & (== !=) (< > <= >=) (<< >>) (+ -) (* / %).
    Value binary(int level)
    {
        static const std::vector<std::vector<std::string>> levels{
            {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
        if (level == static_cast<int>(levels.size()))
            return unary();
        Value v = binary(level + 1);
        while (true) {
            std::string op;
            for (const std::string &candidate : levels[level]) {
                if (accept(candidate.c_str())) {
                    op = candidate;
                    break;
                }
            }
            if (op.empty())
                return v;
            const Value r = binary(level + 1);
            v = apply(op, v, r);
        }
    }

    static Value apply(const std::string &op, Value a, Value b)
    {
        if (!a || !b)
            return std::nullopt;
        const long long x = *a, y = *b;
        if (op == "|") return x | y;
        if (op == "^") return x ^ y;
        if (op == "&") return x & y;
        if (op == "==") return x == y;
        if (op == "!=") return x != y;
        if (op == "<") return x < y;
        if (op == ">") return x > y;
        if (op == "<=") return x <= y;
        if (op == ">=") return x >= y;
        if (op == "<<") return y < 0 || y > 62 ? std::nullopt : Value(x << y);
        if (op == ">>") return y < 0 || y > 62 ? std::nullopt : Value(x >> y);
        if (op == "+") return static_cast<long long>(static_cast<unsigned long long>(x) + static_cast<unsigned long long>(y));
        if (op == "-") return static_cast<long long>(static_cast<unsigned long long>(x) - static_cast<unsigned long long>(y));
        if (op == "*") return static_cast<long long>(static_cast<unsigned long long>(x) * static_cast<unsigned long long>(y));
        if (y == 0)
            return std::nullopt; // the compiler reports it
        if (op == "/") return x / y;
        return x % y;
    }

    Value unary()
    {
        if (accept("!")) {
            const Value v = unary();
            return v ? Value(!*v) : std::nullopt;
        }
        if (accept("~")) {
            const Value v = unary();
            return v ? Value(~*v) : std::nullopt;
        }
        if (accept("-")) {
            const Value v = unary();
            return v ? Value(-*v) : std::nullopt;
        }
        if (accept("+"))
            return unary();
        if (accept("(")) {
            const Value v = conditional();
            if (!accept(")"))
                m_bad = true;
            return v;
        }
        const Token &t = peek();
        if (t.kind == Token::Kind::Number) {
            ++m_pos;
            return t.value;
        }
        if (t.kind == Token::Kind::Unknown) {
            ++m_pos;
            return std::nullopt;
        }
        m_bad = true;
        return std::nullopt;
    }

    std::vector<Token> m_tokens;
    std::size_t m_pos = 0;
    bool m_bad = false;
};

} // namespace

std::optional<bool> evaluateCondition(std::string_view expression, const MacroTable &macros)
{
    std::vector<Token> tokens;
    std::set<std::string> expanding;
    if (!Lexer(macros).tokenize(expression, tokens, expanding) || tokens.empty())
        return std::nullopt;
    const auto value = Parser(std::move(tokens)).parse();
    if (!value || !*value)
        return std::nullopt;
    return **value != 0;
}

} // namespace stitch::frontend
