//! The Python literals of a `.npy` header, parsed as numpy parses them (`ast.literal_eval`):
//! strings, ints, `True`/`False`/`None`, tuples, lists and dicts. Errors are one line.

/// A parsed literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Int(i128),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    List(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// Python's name for the value's type with its article, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "a str",
            Value::Int(_) => "an int",
            Value::Bool(_) => "a bool",
            Value::None => "None",
            Value::Tuple(_) => "a tuple",
            Value::List(_) => "a list",
            Value::Dict(_) => "a dict",
        }
    }
}

/// Parses `text`, one literal with whitespace around it.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        at: 0,
        depth: 0,
    };
    let value = parser.value()?;
    parser.skip_space();
    if parser.at < parser.chars.len() {
        return Err(parser.unexpected("the end of the header"));
    }
    Ok(value)
}

/// Nesting deeper than this is refused (numpy headers nest two levels).
const MAX_DEPTH: usize = 32;

struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn unexpected(&self, expected: &str) -> String {
        match self.peek() {
            Some(c) => format!(
                "expected {expected} at character {} of the header, found {c:?}",
                self.at
            ),
            None => format!("expected {expected}, but the header ends"),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_space();
        match self.peek() {
            Some(q @ ('\'' | '"')) => self.string(q),
            Some('(') => self.sequence(')').map(|(items, comma)| {
                // `(x)` is x itself; `(x,)` and `()` are tuples.
                if items.len() == 1 && !comma {
                    items.into_iter().next().expect("one item")
                } else {
                    Value::Tuple(items)
                }
            }),
            Some('[') => self.sequence(']').map(|(items, _)| Value::List(items)),
            Some('{') => self.dict(),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => self.int(),
            Some(c) if c.is_alphabetic() => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.at += 1;
                }
                let word: String = self.chars[start..self.at].iter().collect();
                match word.as_str() {
                    "True" => Ok(Value::Bool(true)),
                    "False" => Ok(Value::Bool(false)),
                    "None" => Ok(Value::None),
                    _ => Err(format!("{word:?} is not a Python literal")),
                }
            }
            _ => Err(self.unexpected("a Python literal")),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("the header nests too deeply".into());
        }
        self.at += 1;
        Ok(())
    }

    /// Items up to `close`, and whether a comma followed the last.
    fn sequence(&mut self, close: char) -> Result<(Vec<Value>, bool), String> {
        self.enter()?;
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.at += 1;
                self.depth -= 1;
                return Ok((items, comma));
            }
            if !items.is_empty() && !comma {
                return Err(self.unexpected(&format!("',' or '{close}'")));
            }
            items.push(self.value()?);
            self.skip_space();
            comma = self.peek() == Some(',');
            if comma {
                self.at += 1;
            }
        }
    }

    fn dict(&mut self) -> Result<Value, String> {
        self.enter()?;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some('}') {
                self.at += 1;
                self.depth -= 1;
                return Ok(Value::Dict(items));
            }
            let key = self.value()?;
            self.skip_space();
            if self.peek() != Some(':') {
                return Err(self.unexpected("':'"));
            }
            self.at += 1;
            let value = self.value()?;
            if items.iter().any(|(k, _)| *k == key) {
                // Python keeps the last; a header numpy writes never repeats a key.
                items.retain(|(k, _)| *k != key);
            }
            items.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(',') => self.at += 1,
                Some('}') => {}
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }

    fn string(&mut self, quote: char) -> Result<Value, String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => return Err("a string in the header is not closed".into()),
                Some(c) if c == quote => {
                    self.at += 1;
                    return Ok(Value::Str(out));
                }
                Some('\\') => {
                    self.at += 1;
                    let escaped = match self.peek() {
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some(c @ ('\\' | '\'' | '"')) => c,
                        _ => return Err(self.unexpected("an escape the header can use")),
                    };
                    out.push(escaped);
                    self.at += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
    }

    fn int(&mut self) -> Result<Value, String> {
        let start = self.at;
        if matches!(self.peek(), Some('-' | '+')) {
            self.at += 1;
        }
        let digits = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '_') {
            self.at += 1;
        }
        if self.at == digits {
            return Err(self.unexpected("a digit"));
        }
        if self
            .peek()
            .is_some_and(|c| c == '.' || c == 'e' || c == 'E' || c.is_alphabetic())
        {
            return Err(self.unexpected("an int"));
        }
        let text: String = self.chars[start..self.at]
            .iter()
            .filter(|&&c| c != '_')
            .collect();
        text.parse::<i128>()
            .map(Value::Int)
            .map_err(|_| format!("{text} is too large a number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_numpy_writes() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }          \n";
        let Value::Dict(items) = parse(header).unwrap() else {
            panic!("a dict")
        };
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].1, Value::Str("<f4".into()));
        assert_eq!(items[1].1, Value::Bool(false));
        assert_eq!(items[2].1, Value::Tuple(vec![Value::Int(3)]));
        assert_eq!(parse("()").unwrap(), Value::Tuple(vec![]));
        assert_eq!(
            parse("(2, 3)").unwrap(),
            Value::Tuple(vec![Value::Int(2), Value::Int(3)])
        );
        assert_eq!(parse("(7)").unwrap(), Value::Int(7));
        assert_eq!(parse("[1]").unwrap(), Value::List(vec![Value::Int(1)]));
        assert_eq!(parse("\"a'b\"").unwrap(), Value::Str("a'b".into()));
    }

    #[test]
    fn refuses_what_literal_eval_refuses_in_one_line() {
        for bad in [
            "{'a': 1",
            "{'a' 1}",
            "(1 2)",
            "f(1)",
            "1.5",
            "'open",
            "{} x",
            "",
            &"(".repeat(100),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(!err.contains('\n'), "{bad:?}: {err}");
        }
    }
}
