//! A kernel's own name, read from the demangled one ncu writes, and the title a version
//! gets from it.

/// A kernel's own name, as ncu writes kernels: without return type, namespaces,
/// template arguments and parameters. `void ns::flash_fwd<T, 128>(Params)` →
/// `flash_fwd`; `enable_if<!T7, void>::type kernel<…>(T13)` → `kernel`;
/// `void unnamed>::gemm<32>(…)` (ncu's unbalanced anonymous namespace) → `gemm`;
/// Numba's `copy_blocked[abi:v1,…](Array<…>)` → `copy_blocked`;
/// `Functor::operator()(int)` → `operator()`.
pub fn short_kernel_name(full: &str) -> String {
    let text = without_anonymous_namespaces(full.trim());
    let parts = top_level(&text);
    let name = own_name(&parts).map(str::trim).unwrap_or("");
    if name.is_empty() {
        full.to_string()
    } else {
        name.to_string()
    }
}

/// The title a version gets when none is given: the kernel's short name, cut to
/// [`TITLE_MAX`] characters with an ellipsis (a generated name such as cuDNN's, 110
/// characters with no template or parameters to drop, would fill every headline; the
/// full name stays one key away in the explorer).
pub fn default_title(kernel: &str) -> String {
    let short = short_kernel_name(kernel);
    if short.chars().count() <= TITLE_MAX {
        return short;
    }
    let mut t: String = short.chars().take(TITLE_MAX - 1).collect();
    t.push('…');
    t
}

/// The longest title [`default_title`] gives, in characters.
pub const TITLE_MAX: usize = 48;

/// Removes the anonymous namespace qualifiers ncu writes: `<unnamed>::`, its
/// unbalanced form `unnamed>::`, and `(anonymous namespace)::`.
pub(crate) fn without_anonymous_namespaces(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        let at_word_start = !out.ends_with(is_ident);
        let skip = ["<unnamed>::", "(anonymous namespace)::", "unnamed>::"]
            .iter()
            .find(|q| rest.starts_with(**q) && (at_word_start || q.starts_with(['<', '('])));
        match skip {
            Some(q) => rest = &rest[q.len()..],
            None => {
                let c = rest.chars().next().expect("rest is not empty");
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// A part of a demangled name at its top level, brackets collapsed into groups.
#[derive(Debug, PartialEq)]
enum Part<'a> {
    /// An identifier, or an operator's name (`operator()`, `operator<<`).
    Name(&'a str),
    /// A bracketed group with its brackets: `<…>`, `(…)`, `[…]`, `{…}`.
    Group(char, &'a str),
    /// `::`
    Scope,
    /// Spaces and anything else between the parts.
    Other,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || c == '.'
}

/// The parts of a demangled name at its top level.
fn top_level(s: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let len = if is_ident(c) {
            let word = rest.find(|c| !is_ident(c)).unwrap_or(rest.len());
            let len = if &rest[..word] == "operator" {
                word + operator_symbol(&rest[word..])
            } else {
                word
            };
            parts.push(Part::Name(&rest[..len]));
            len
        } else if rest.starts_with("::") {
            parts.push(Part::Scope);
            2
        } else if matches!(c, '<' | '(' | '[' | '{') {
            let len = group_len(rest);
            parts.push(Part::Group(c, &rest[..len]));
            len
        } else {
            parts.push(Part::Other);
            c.len_utf8()
        };
        rest = &rest[len..];
    }
    parts
}

/// The length of the bracketed group `s` starts with (all of `s` when it is never
/// closed). A `->` inside (a lambda's return type) closes nothing.
fn group_len(s: &str) -> usize {
    let mut depth = 0usize;
    let mut previous = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' if previous == '-' => {}
            '>' | ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        previous = c;
    }
    s.len()
}

/// The length of the operator after the word `operator`: `()`, `<<=`, ` new[]`,
/// ` bool` …; 0 when none follows.
fn operator_symbol(s: &str) -> usize {
    const SYMBOLS: &[&str] = &[
        "<<=", ">>=", "<=>", "->*", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&",
        "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=", "+", "-", "*", "/", "%",
        "^", "&", "|", "~", "!", "=", "<", ">", ",",
    ];
    let trimmed = s.trim_start();
    let spaces = s.len() - trimmed.len();
    if let Some(sym) = SYMBOLS.iter().find(|sym| trimmed.starts_with(**sym)) {
        return spaces + sym.len();
    }
    // `operator new`, `operator delete[]`, a conversion such as `operator bool`.
    let word = trimmed.find(|c| !is_ident(c)).unwrap_or(trimmed.len());
    if word == 0 {
        return 0;
    }
    let brackets = if trimmed[word..].starts_with("[]") {
        2
    } else {
        0
    };
    spaces + word + brackets
}

/// The function's own name: the last name right before a parameter list (template
/// arguments and ABI tags may stand between); without a parameter list, the last
/// name or `{lambda…}` group.
fn own_name<'a>(parts: &[Part<'a>]) -> Option<&'a str> {
    let skippable = |p: &Part| matches!(p, Part::Other | Part::Group('<' | '[', _));
    let before_parameters = parts.iter().enumerate().rev().find_map(|(i, p)| match p {
        Part::Name(n) => {
            let next = parts[i + 1..].iter().find(|q| !skippable(q));
            matches!(next, Some(Part::Group('(', _))).then_some(*n)
        }
        _ => None,
    });
    before_parameters.or_else(|| {
        parts.iter().rev().find_map(|p| match p {
            Part::Name(n) => Some(*n),
            Part::Group('{', g) => Some(*g),
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::short_kernel_name;

    #[test]
    fn short_names() {
        assert_eq!(
            short_kernel_name("mm_naive(const float *, const float *, float *, int)"),
            "mm_naive"
        );
        assert_eq!(
            short_kernel_name(
                "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128>, (bool)0>(pytorch_flash::Flash_fwd_params)"
            ),
            "flash_fwd_kernel"
        );
        assert_eq!(
            short_kernel_name(
                "void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4>(int)"
            ),
            "distribution_elementwise_grid_stride_kernel"
        );
        assert_eq!(short_kernel_name("softmax_kernel"), "softmax_kernel");
    }

    #[test]
    fn a_default_title_is_short() {
        let cudnn = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0";
        assert_eq!(
            super::default_title(cudnn),
            "cudnn_generated_fort_native_sdpa_sm90_flash_fpr…"
        );
    }
}
