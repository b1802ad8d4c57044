//! A small JSON writer for hot output paths: no intermediate values, no per-field allocation.

/// Appends `s` as a JSON string.
pub fn string(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => {
                buf.extend_from_slice(&bytes[start..i]);
                buf.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Appends a float; NaN and infinities become `null` (JSON has no spelling for them).
pub fn float(buf: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let mut b = ryu::Buffer::new();
        let s = b.format_finite(v);
        buf.extend_from_slice(s.strip_suffix(".0").unwrap_or(s).as_bytes());
    } else {
        buf.extend_from_slice(b"null");
    }
}

/// Appends an integer.
pub fn int(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Builds one JSON object field by field.
pub struct Obj<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl<'b> Obj<'b> {
    pub fn new(buf: &'b mut Vec<u8>) -> Obj<'b> {
        buf.push(b'{');
        Obj { buf, first: true }
    }

    fn key(&mut self, k: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        string(self.buf, k);
        self.buf.push(b':');
    }

    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        string(self.buf, v);
        self
    }

    /// A timestamp as an ISO 8601 string.
    pub fn ts(&mut self, k: &str, v: tokstat_parsers::stamp::Ts) -> &mut Self {
        self.key(k);
        self.buf.push(b'"');
        v.write_iso(self.buf);
        self.buf.push(b'"');
        self
    }

    pub fn u(&mut self, k: &str, v: Option<u64>) -> &mut Self {
        if let Some(v) = v {
            self.key(k);
            int(self.buf, v);
        }
        self
    }

    pub fn f(&mut self, k: &str, v: Option<f64>) -> &mut Self {
        if let Some(v) = v {
            self.key(k);
            float(self.buf, v);
        }
        self
    }

    pub fn b(&mut self, k: &str, v: Option<bool>) -> &mut Self {
        if let Some(v) = v {
            self.key(k);
            self.buf
                .extend_from_slice(if v { b"true" } else { b"false" });
        }
        self
    }

    /// A value that is a number when it reads as one (`128`, `0.92`, `1,048,576`), else a string.
    pub fn scalar(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        scalar(self.buf, v);
        self
    }

    /// A nested object of raw `key: value` pairs.
    pub fn pairs<'p>(
        &mut self,
        k: &str,
        pairs: impl Iterator<Item = (&'p str, &'p str)>,
    ) -> &mut Self {
        let mut pairs = pairs.peekable();
        if pairs.peek().is_none() {
            return self;
        }
        self.key(k);
        let mut o = Obj::new(self.buf);
        for (pk, pv) in pairs {
            o.scalar(pk, pv);
        }
        o.end();
        self
    }

    pub fn end(self) {
        self.buf.push(b'}');
    }
}

/// Writes `v` as a JSON number if it is a plain decimal (thousands separators removed), else
/// as a string.
pub fn scalar(buf: &mut Vec<u8>, v: &str) {
    use tokstat_parsers::num;
    let plain = !v.is_empty()
        && v.bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b','));
    match plain
        .then(|| num::uint(v).map(|n| n as f64).or_else(|| num::float_sep(v)))
        .flatten()
    {
        Some(n) if n.is_finite() => float(buf, n),
        _ => string(buf, v),
    }
}

/// `1,048,576` → `1048576`; any other text is returned as it is.
pub fn plain_number(v: &str) -> std::borrow::Cow<'_, str> {
    match tokstat_parsers::num::uint(v) {
        Some(n) if v.contains(',') => n.to_string().into(),
        _ => v.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes() {
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        o.str("a", "x\"y\n\u{1}")
            .u("n", Some(3))
            .u("m", None)
            .f("f", Some(0.12))
            .f("g", Some(3.0))
            .b("t", Some(true));
        o.scalar("s", "1,048,576")
            .scalar("t2", "torch.bfloat16")
            .scalar("z", "8.00");
        o.end();
        assert_eq!(
            String::from_utf8(b).unwrap(),
            r#"{"a":"x\"y\n\u0001","n":3,"f":0.12,"g":3,"t":true,"s":1048576,"t2":"torch.bfloat16","z":8}"#
        );
    }
}
