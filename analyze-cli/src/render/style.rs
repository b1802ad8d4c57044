//! How terminal output may look: colour (never with `NO_COLOR`, `TERM=dumb` or when stdout
//! is not a terminal), Unicode (block charts and box tables only when the locale is UTF-8,
//! else ASCII), and the width tables and charts must fit (the terminal's, when it is one).

use anstyle::{AnsiColor, Style as Paint};

/// What the terminal renderers may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub colour: bool,
    pub unicode: bool,
    /// Columns to fit, when known.
    pub width: Option<u16>,
}

/// What a coloured piece of text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Bad,
    Warning,
    Muted,
}

impl Style {
    /// Plain Unicode text of any width: what files, pipes and tests get.
    pub fn plain() -> Style {
        Style {
            colour: false,
            unicode: true,
            width: None,
        }
    }

    /// The style for standard output as this process has it.
    pub fn detect() -> Style {
        use std::io::IsTerminal;
        let terminal = std::io::stdout().is_terminal();
        let width = if terminal {
            comfy_table::Table::new().width()
        } else {
            None
        };
        Style::decide(terminal, width, |k| std::env::var(k).ok())
    }

    /// The style for an output that is a terminal (or not) of `width`, in the environment
    /// `env` gives.
    pub fn decide(
        terminal: bool,
        width: Option<u16>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Style {
        let var = |k: &str| env(k).filter(|v| !v.is_empty());
        let no_colour = var("NO_COLOR").is_some() || var("TERM").is_some_and(|t| t == "dumb");
        // the first of LC_ALL, LC_CTYPE, LANG that is set decides, as for every C program
        let locale = var("LC_ALL")
            .or_else(|| var("LC_CTYPE"))
            .or_else(|| var("LANG"));
        let unicode = locale.is_none_or(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("utf-8") || l.contains("utf8")
        });
        Style {
            colour: terminal && !no_colour,
            unicode,
            width: if terminal { width } else { None },
        }
    }

    /// `text` in the colour of `tone`, when colour is on.
    pub fn paint(&self, text: &str, tone: Tone) -> String {
        if !self.colour {
            return text.to_string();
        }
        let p = Paint::new().fg_color(Some(
            match tone {
                Tone::Good => AnsiColor::Green,
                Tone::Bad => AnsiColor::Red,
                Tone::Warning => AnsiColor::Yellow,
                Tone::Muted => AnsiColor::BrightBlack,
            }
            .into(),
        ));
        format!("{p}{text}{p:#}")
    }

    /// The finished text: lines longer than the width wrapped at spaces (indented under
    /// their start), and every character outside ASCII replaced by its nearest ASCII spelling
    /// (charts, arrows, separators) when the locale is not UTF-8.
    pub fn finish(&self, text: String) -> String {
        let text = match self.width {
            Some(w) => wrap(&text, usize::from(w)),
            None => text,
        };
        if self.unicode {
            return text;
        }
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                c if c.is_ascii() => out.push(c),
                '·' => out.push('-'),
                '→' => out.push_str("->"),
                '–' | '—' | '─' => out.push('-'),
                '━' => out.push('='),
                '│' | '┆' => out.push('|'),
                '└' | '┌' | '┐' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' => {
                    out.push('+')
                }
                '▁' | '▂' => out.push('.'),
                '▃' | '▄' => out.push(':'),
                '▅' | '▆' => out.push('='),
                '▇' | '█' => out.push('#'),
                '⚠' => out.push('!'),
                '◀' => out.push('<'),
                '●' => out.push('*'),
                '○' => out.push('o'),
                '▲' | '△' => out.push('^'),
                '■' | '□' => out.push('#'),
                '✚' => out.push('+'),
                '≈' => out.push('~'),
                '±' => out.push_str("+/-"),
                '†' => out.push('+'),
                _ => out.push('?'),
            }
        }
        out
    }

    /// The comfy-table preset for this style.
    pub fn table_preset(&self) -> &'static str {
        if self.unicode {
            comfy_table::presets::UTF8_FULL_CONDENSED
        } else {
            comfy_table::presets::ASCII_FULL_CONDENSED
        }
    }

    /// A table of this style: its preset, and wrapped to the width when one is known.
    pub fn table(&self) -> comfy_table::Table {
        let mut t = comfy_table::Table::new();
        t.load_preset(self.table_preset());
        if let Some(w) = self.width {
            t.set_width(w)
                .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
        }
        t
    }
}

/// Lines of `text` longer than `width` characters, broken at spaces; a continuation is
/// indented two more than its line's own indentation.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start().len() + 2;
        let mut col = 0;
        for (k, word) in body.split(' ').enumerate() {
            let n = word.chars().count();
            if k > 0 {
                if col + 1 + n > width && col > indent {
                    out.push('\n');
                    out.push_str(&" ".repeat(indent));
                    col = indent;
                } else {
                    out.push(' ');
                    col += 1;
                }
            }
            out.push_str(word);
            col += n;
        }
        out.push_str(nl);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_decides() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
        };
        let utf8 = Style::decide(true, Some(80), env(&[("LANG", "en_US.UTF-8")]));
        assert_eq!(
            utf8,
            Style {
                colour: true,
                unicode: true,
                width: Some(80)
            }
        );
        assert!(!Style::decide(true, None, env(&[("NO_COLOR", "1")])).colour);
        assert!(!Style::decide(true, None, env(&[("TERM", "dumb")])).colour);
        assert!(!Style::decide(false, Some(80), env(&[])).colour);
        assert_eq!(Style::decide(false, Some(80), env(&[])).width, None);
        assert!(!Style::decide(true, None, env(&[("LANG", "C")])).unicode);
        // LC_ALL before LANG
        let s = Style::decide(
            true,
            None,
            env(&[("LC_ALL", "POSIX"), ("LANG", "en_US.UTF-8")]),
        );
        assert!(!s.unicode);
        assert!(Style::decide(true, None, env(&[("LC_ALL", "C.utf8")])).unicode);
    }

    #[test]
    fn long_lines_wrap_under_their_start() {
        let s = Style {
            width: Some(20),
            ..Style::plain()
        };
        assert_eq!(
            s.finish("  one two three four five six\nshort\n".into()),
            "  one two three four\n    five six\nshort\n"
        );
    }

    #[test]
    fn ascii_spellings() {
        let s = Style {
            colour: false,
            unicode: false,
            width: None,
        };
        assert_eq!(
            s.finish("a · b → c ▇█ ⚠ 8m–9m ✓".into()),
            "a - b -> c ## ! 8m-9m ?"
        );
        assert_eq!(Style::plain().finish("→".into()), "→");
        let c = Style {
            colour: true,
            ..Style::plain()
        };
        assert_eq!(c.paint("x", Tone::Bad), "\u{1b}[31mx\u{1b}[0m");
        assert_eq!(Style::plain().paint("x", Tone::Bad), "x");
    }
}
