#pragma once
// Indented CUDA text, written line by line: what every kernel generator builds its source with.
//   codegen generators -> CudaWriter -> GeneratedProgram::source

#include <sstream>
#include <string>

namespace stitch::codegen {

class CudaWriter {
public:
    /// One line at the current indentation (an empty line stays empty).
    CudaWriter &line(const std::string &text = {})
    {
        if (!text.empty())
            m_out << std::string(static_cast<std::size_t>(m_indent) * 4, ' ') << text;
        m_out << '\n';
        return *this;
    }
    /// "text {" and indent.
    CudaWriter &open(const std::string &text)
    {
        line(text.empty() ? "{" : text + " {");
        ++m_indent;
        return *this;
    }
    /// Dedent and "}" (plus a suffix such as ";").
    CudaWriter &close(const std::string &suffix = {})
    {
        --m_indent;
        line("}" + suffix);
        return *this;
    }
    /// Lines of a comment block, each prefixed with "// ".
    CudaWriter &comment(const std::string &text)
    {
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);)
            line(l.empty() ? "//" : "// " + l);
        return *this;
    }
    /// Every line of text at the current indentation.
    CudaWriter &lines(const std::string &text)
    {
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);)
            line(l);
        return *this;
    }
    std::string str() const { return m_out.str(); }

private:
    std::ostringstream m_out;
    int m_indent = 0;
};

} // namespace stitch::codegen
