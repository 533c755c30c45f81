//! Spring profiles: the expressions of `spring.config.activate.on-profile` (`prod`, `!test`,
//! `eu & (prod | staging)`), and the profiles a set of properties activates.

/// The profiles a document is for: a list of Spring profile expressions, any of which may
/// match (`spring.config.activate.on-profile: [prod, "eu & staging"]`, or `prod,staging`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OnProfile(Vec<Expr>);

/// One profile expression, as Spring's `Profiles.of` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr {
    Name(String),
    Not(Box<Expr>),
    All(Vec<Expr>),
    Any(Vec<Expr>),
}

impl OnProfile {
    /// Parses each item as an expression; an empty list, an empty item or a malformed
    /// expression is an error saying which.
    pub(crate) fn parse(items: &[String]) -> Result<OnProfile, String> {
        if items.is_empty() {
            return Err("expected a profile expression, got nothing".into());
        }
        items
            .iter()
            .map(|item| {
                parse(&mut Tokens::new(item), Context::Top)
                    .ok_or_else(|| format!("malformed profile expression {item:?}"))
            })
            .collect::<Result<_, _>>()
            .map(OnProfile)
    }

    /// Whether one of the expressions holds with `active` the active profiles.
    pub(crate) fn matches(&self, active: &[String]) -> bool {
        self.0.iter().any(|expr| expr.matches(active))
    }
}

impl Expr {
    fn matches(&self, active: &[String]) -> bool {
        match self {
            Expr::Name(name) => active.iter().any(|a| a == name),
            Expr::Not(inner) => !inner.matches(active),
            Expr::All(all) => all.iter().all(|e| e.matches(active)),
            Expr::Any(any) => any.iter().any(|e| e.matches(active)),
        }
    }
}

/// Where [`parse`] is: at the top, inside parentheses, or reading the operand of `!`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Top,
    Parenthesis,
    Negate,
}

/// `(`, `)`, `&`, `|`, `!` and the names between them, blanks skipped.
struct Tokens<'a> {
    rest: &'a str,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Tokens { rest: text }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.rest = self.rest.trim_start();
        let first = self.rest.chars().next()?;
        let len = if "()&|!".contains(first) {
            1
        } else {
            self.rest
                .find(|c: char| c.is_whitespace() || "()&|!".contains(c))
                .unwrap_or(self.rest.len())
        };
        let (token, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some(token)
    }
}

/// Spring's `ProfilesParser.parseTokens`: `&` and `|` may not be mixed without parentheses;
/// names side by side are all required, as in Spring. `None` when malformed, and (stricter
/// than Spring, which lets them pass) when a parenthesis is not matched.
fn parse(tokens: &mut Tokens<'_>, context: Context) -> Option<Expr> {
    let mut elements = Vec::new();
    let mut any: Option<bool> = None;
    while let Some(token) = tokens.next() {
        match token {
            "(" => {
                let inner = parse(tokens, Context::Parenthesis)?;
                if context == Context::Negate {
                    return Some(inner);
                }
                elements.push(inner);
            }
            "&" | "|" => {
                let or = token == "|";
                if any.is_some_and(|was| was != or) {
                    return None;
                }
                any = Some(or);
            }
            "!" => elements.push(Expr::Not(Box::new(parse(tokens, Context::Negate)?))),
            ")" => {
                let merged = merge(elements, any)?;
                if context == Context::Parenthesis {
                    return Some(merged);
                }
                // A `)` without its `(`.
                return None;
            }
            name => {
                let name = Expr::Name(name.to_owned());
                if context == Context::Negate {
                    return Some(name);
                }
                elements.push(name);
            }
        }
    }
    if context == Context::Parenthesis {
        // A `(` never closed.
        return None;
    }
    merge(elements, any)
}

fn merge(mut elements: Vec<Expr>, any: Option<bool>) -> Option<Expr> {
    match elements.len() {
        0 => None,
        1 => elements.pop(),
        _ if any == Some(true) => Some(Expr::Any(elements)),
        _ => Some(Expr::All(elements)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(expression: &str, active: &[&str]) -> bool {
        let active: Vec<String> = active.iter().map(|s| (*s).to_owned()).collect();
        OnProfile::parse(&[expression.to_owned()])
            .unwrap()
            .matches(&active)
    }

    #[test]
    fn expressions_follow_spring() {
        assert!(holds("prod", &["prod"]));
        assert!(!holds("prod", &["dev"]));
        assert!(holds("!basic-auth", &["default"]));
        assert!(!holds("!basic-auth", &["basic-auth", "x"]));
        assert!(holds("eu & (prod | staging)", &["eu", "staging"]));
        assert!(!holds("eu & (prod | staging)", &["us", "staging"]));
        assert!(holds("a | b | c", &["c"]));
        assert!(holds("!(a & b)", &["a"]));
        assert!(!holds("!(a & b)", &["a", "b"]));
        assert!(holds("!!a", &["a"]));
        // Side by side: all required, as Spring reads them.
        assert!(holds("a b", &["a", "b"]));
        assert!(!holds("a b", &["a"]));
        let any = OnProfile::parse(&["x".into(), "y & z".into()]).unwrap();
        assert!(any.matches(&["x".into()]));
        assert!(!any.matches(&["y".into()]));
    }

    #[test]
    fn malformed_expressions_are_errors() {
        for bad in ["", " ", "a & b | c", "(a", "a)", "!", "&", "()", "a & (b"] {
            assert!(
                OnProfile::parse(&[bad.to_owned()]).is_err(),
                "{bad:?} should be refused"
            );
        }
        assert!(OnProfile::parse(&[]).is_err());
    }
}
