//! A small JSON tree for the front ends: keeps key order, rejects duplicate keys, and gives
//! every value a JSON path (`$.syscalls[12].args[0].op`) so that errors can say where.
//!
//! The front ends walk this tree by hand instead of deriving `Deserialize` on typed structs:
//! that way every message can name the offending place and list what was expected, and the
//! field-by-field rules of each reference tool (null means absent, unknown keys ignored or
//! refused, ...) are spelled out in one place each.

use super::{PolicyError, Warning, WarningKind};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// A parsed JSON value. Objects keep their keys in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// A non-negative integer.
    UInt(u64),
    /// A negative integer.
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// How the value is described in "expected X, found Y" messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::UInt(_) | Json::Int(_) => "an integer",
            // serde_json reads integers past u64 and i64 as floats.
            Json::Float(x)
                if x.fract() == 0.0 && (*x >= 2f64.powi(64) || *x <= -(2f64.powi(63))) =>
            {
                "an integer outside the 64-bit range"
            }
            Json::Float(_) => "a fractional number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(if v >= 0 {
            Json::UInt(v as u64)
        } else {
            Json::Int(v)
        })
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::UInt(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        // Go's encoding/json and serde both let a repeated key silently overwrite the first
        // one; in a security policy that hides mistakes, so secopt refuses it.
        // Profiles' objects have a handful of keys: those are compared with the earlier ones
        // directly; past `SCAN_KEYS` a set of them takes over, so that an object of many keys
        // stays linear (with std's keyed hash: the file is input).
        const SCAN_KEYS: usize = 16;
        let mut entries: Vec<(String, Json)> = Vec::new();
        let mut seen: Option<HashSet<String>> = None;
        while let Some(key) = map.next_key::<String>()? {
            let repeated = if entries.len() < SCAN_KEYS {
                entries.iter().any(|(k, _)| *k == key)
            } else {
                let seen =
                    seen.get_or_insert_with(|| entries.iter().map(|(k, _)| k.clone()).collect());
                !seen.insert(key.clone())
            };
            if repeated {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let value = map.next_value()?;
            entries.push((key, value));
        }
        Ok(Json::Obj(entries))
    }
}

/// Parses `bytes` as one JSON document. Syntax errors carry line and column.
pub(crate) fn parse_document(bytes: &[u8], file: &str) -> Result<Json, PolicyError> {
    serde_json::from_slice::<Json>(bytes).map_err(|e| {
        let mut message = e.to_string();
        // serde_json appends " at line L column C"; the error type carries them separately.
        if let Some(at) = message.rfind(" at line ") {
            message.truncate(at);
        }
        // Editors on Windows save a byte-order mark that JSON (and Docker's Go decoder) refuse;
        // name it, since the message alone points at an invisible character.
        if bytes.starts_with(b"\xEF\xBB\xBF") && e.line() == 1 && e.column() <= 1 {
            message = "the file starts with a UTF-8 byte-order mark (EF BB BF), which JSON does \
                       not allow: save it without one"
                .to_owned();
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            message = "the file is empty (a profile is a JSON object)".to_owned();
        }
        PolicyError::Syntax {
            file: file.to_owned(),
            line: e.line(),
            // serde_json says column 0 before a line's first character (an empty file);
            // every other message here is 1-based.
            column: e.column().max(1),
            message,
        }
    })
}

/// A JSON path such as `$.syscalls[3].names[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JPath(String);

impl JPath {
    pub(crate) fn root() -> JPath {
        JPath("$".to_owned())
    }
    /// The path of member `key` of this object.
    pub(crate) fn key(&self, key: &str) -> JPath {
        let plain = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if plain {
            // Built by hand rather than with `format!`: a path is made for every member and
            // element read (14% of the parse of Docker's profile went to formatting them).
            let mut s = String::with_capacity(self.0.len() + 1 + key.len());
            s.push_str(&self.0);
            s.push('.');
            s.push_str(key);
            JPath(s)
        } else {
            // A JSON string literal is always a valid bracketed member name.
            let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"));
            JPath(format!("{}[{quoted}]", self.0))
        }
    }
    /// The path of element `i` of this array.
    pub(crate) fn index(&self, i: usize) -> JPath {
        // Digits by hand rather than through `write!`: every name of every rule gets a path
        // (a quarter of the time `Reader::strings` takes went to the formatting machinery).
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = i;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let mut s = String::with_capacity(self.0.len() + 2 + digits.len() - at);
        s.push_str(&self.0);
        s.push('[');
        s.extend(digits[at..].iter().map(|&d| char::from(d)));
        s.push(']');
        JPath(s)
    }
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The file being read, for error messages, and the warnings collected so far.
pub(crate) struct Reader<'f> {
    pub(crate) file: &'f str,
    pub(crate) warnings: Vec<Warning>,
    /// Match object keys as Go's encoding/json does (runc, moby and podman read OCI profiles
    /// with it): a key names a field when it equals the field's name up to case
    /// (`"Syscalls"`, `"NAMES"`, even `"ſyscalls"` with U+017F). Off for serde's exact
    /// matching (Firecracker).
    pub(crate) go_keys: bool,
    /// Read only the runtime spec's fields, as runc reads a whole OCI `config.json`: moby's
    /// and podman's extensions are ignored there (with a warning saying what that changes).
    pub(crate) runtime_spec: bool,
}

impl<'f> Reader<'f> {
    pub(crate) fn new(file: &'f str) -> Self {
        Reader {
            file,
            warnings: Vec::new(),
            go_keys: false,
            runtime_spec: false,
        }
    }

    /// A reader with Go's key matching ([`Reader::go_keys`]).
    pub(crate) fn go(file: &'f str) -> Self {
        Reader {
            go_keys: true,
            ..Reader::new(file)
        }
    }

    /// An error at `path`.
    pub(crate) fn error(&self, path: &JPath, message: impl Into<String>) -> PolicyError {
        PolicyError::Invalid {
            file: self.file.to_owned(),
            path: path.as_str().to_owned(),
            message: message.into(),
        }
    }

    pub(crate) fn warn(&mut self, kind: WarningKind, path: &JPath, message: impl Into<String>) {
        self.warn_at(kind, path.as_str(), message);
    }

    /// A warning at a path already rendered as text (a rule's `origin`).
    pub(crate) fn warn_at(&mut self, kind: WarningKind, path: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            path: path.to_owned(),
            message: message.into(),
            kind,
        });
    }

    fn type_error(&self, path: &JPath, expected: &str, found: &Json) -> PolicyError {
        self.error(path, format!("expected {expected}, found {}", found.kind()))
    }

    /// The object `v` (an error at `path` for anything else). With [`Reader::go_keys`], two keys
    /// that are one key to Go are refused: Go would decode both into the same field, the
    /// later overwriting (or, for an object, merging into) the earlier, which is never what
    /// the author meant to review.
    pub(crate) fn object<'j>(&self, v: &'j Json, path: &JPath) -> Result<Obj<'j>, PolicyError> {
        match v {
            Json::Obj(entries) => {
                if self.go_keys {
                    if let Some((j, i)) = go_duplicate(entries) {
                        return Err(self.error(
                            &path.key(&entries[i].0),
                            format!(
                                "{:?} and {:?} are one key to Go's encoding/json, which runc and Docker read profiles with (it matches keys without regard to case); give it once",
                                entries[j].0, entries[i].0
                            ),
                        ));
                    }
                }
                Ok(Obj {
                    entries,
                    path: path.clone(),
                    used: vec![false; entries.len()],
                    go_keys: self.go_keys,
                })
            }
            other => Err(self.type_error(path, "an object", other)),
        }
    }

    pub(crate) fn array<'j>(&self, v: &'j Json, path: &JPath) -> Result<&'j [Json], PolicyError> {
        match v {
            Json::Arr(items) => Ok(items),
            other => Err(self.type_error(path, "an array", other)),
        }
    }

    pub(crate) fn string<'j>(&self, v: &'j Json, path: &JPath) -> Result<&'j str, PolicyError> {
        match v {
            Json::Str(s) => Ok(s),
            other => Err(self.type_error(path, "a string", other)),
        }
    }

    /// A non-negative integer that fits in 64 bits.
    pub(crate) fn u64(&self, v: &Json, path: &JPath) -> Result<u64, PolicyError> {
        match v {
            Json::UInt(n) => Ok(*n),
            Json::Int(n) => {
                Err(self.error(path, format!("expected a non-negative integer, found {n}")))
            }
            // An integer beyond 64 bits parses as a float: say so, not its rounded value.
            Json::Float(x) if x.fract() == 0.0 && x.abs() >= 18446744073709551616.0 => Err(self
                .error(
                    path,
                    "expected an integer that fits in 64 bits, found a larger one",
                )),
            // `1.0`, `1e2`, `-0`: whole, but written as runc's Go decoder refuses for an
            // integer field.
            Json::Float(x) if x.fract() == 0.0 => Err(self.error(
                path,
                format!(
                    "expected an integer, found {x:?} (a number written with a decimal point, \
                     an exponent or a minus sign)"
                ),
            )),
            Json::Float(x) => Err(self.error(path, format!("expected an integer, found {x}"))),
            other => Err(self.type_error(path, "a non-negative integer", other)),
        }
    }

    /// Member `index` of a condition: which of the syscall's six arguments it tests. (runc
    /// would index out of bounds past 5; Firecracker's compiler refuses it.)
    pub(crate) fn arg_index(&self, obj: &mut Obj) -> Result<u8, PolicyError> {
        let (v, path) = obj.require(self, "index", "an argument index 0..=5")?;
        match self.u64(v, &path)? {
            index @ 0..=5 => Ok(index as u8),
            index => Err(self.error(
                &path,
                format!(
                    "argument index {index} is out of range; a syscall has 6 arguments (0..=5)"
                ),
            )),
        }
    }

    /// An array of strings, each with its index in the array: its path is `path.index(i)`,
    /// built only where a message needs it (a path per name was 8% of the parse of Docker's
    /// default profile).
    pub(crate) fn strings<'j>(
        &self,
        v: &'j Json,
        path: &JPath,
    ) -> Result<Vec<(&'j str, usize)>, PolicyError> {
        let items = self.array(v, path)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Json::Str(s) => out.push((s.as_str(), i)),
                other => return Err(self.type_error(&path.index(i), "a string", other)),
            }
        }
        Ok(out)
    }
}

/// An object being read: remembers which keys were looked at so the rest can be reported.
pub(crate) struct Obj<'j> {
    entries: &'j [(String, Json)],
    path: JPath,
    used: Vec<bool>,
    /// [`Reader::go_keys`] of the reader that made it.
    go_keys: bool,
}

/// A key as Go's encoding/json compares it with a field name: each character mapped to
/// upper case after lower case (`unicode.ToUpper(unicode.ToLower(r))`, its `foldName`), so
/// that `K` (U+212A KELVIN SIGN) is `K` and `ſ` (U+017F) is `S`.
fn go_fold(key: &str) -> String {
    key.chars().map(go_fold_char).collect()
}

/// One character of [`go_fold`].
fn go_fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    // Go's mappings are one character each; where Rust's full mapping is longer (`ß` to
    // `SS`), the character stays.
    let lower = one_char(c.to_lowercase()).unwrap_or(c);
    one_char(lower.to_uppercase()).unwrap_or(lower)
}

/// Whether Go's encoding/json takes keys `a` and `b` for one ([`go_fold`]), without
/// building either folded key: absent optional fields are looked up this way for every
/// member of every object, and small objects are checked pairwise for duplicates.
fn go_eq(a: &str, b: &str) -> bool {
    a.chars().map(go_fold_char).eq(b.chars().map(go_fold_char))
}

/// The first member that repeats an earlier one's key as Go's encoding/json reads keys
/// ([`go_fold`]): `(earlier, repeat)`.
fn go_duplicate(entries: &[(String, Json)]) -> Option<(usize, usize)> {
    if entries.len() <= 16 {
        // Pairwise: no allocation, and fewer steps than hashing at this size.
        return (1..entries.len()).find_map(|i| {
            (0..i)
                .find(|&j| go_eq(&entries[j].0, &entries[i].0))
                .map(|j| (j, i))
        });
    }
    // Linear in the keys (a document may have very many).
    let mut first: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(entries.len());
    for (i, (key, _)) in entries.iter().enumerate() {
        match first.entry(go_fold(key)) {
            std::collections::hash_map::Entry::Occupied(j) => return Some((*j.get(), i)),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i);
            }
        }
    }
    None
}

/// The only character of `chars`, if it has exactly one.
fn one_char(mut chars: impl Iterator<Item = char>) -> Option<char> {
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

impl<'j> Obj<'j> {
    /// The index of the member that names field `key`: the same key, or with
    /// [`Reader::go_keys`] one Go takes for it ([`Reader::object`] refused two such).
    fn find(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key).or_else(|| {
            self.go_keys
                .then(|| self.entries.iter().position(|(k, _)| go_eq(k, key)))
                .flatten()
        })
    }

    pub(crate) fn path(&self) -> &JPath {
        &self.path
    }

    /// Member `key` unless it is absent or `null` (both Go's encoding/json and serde's
    /// `Option` read `null` as "not given"), with its path.
    pub(crate) fn get(&mut self, key: &str) -> Option<(&'j Json, JPath)> {
        let i = self.find(key)?;
        self.used[i] = true;
        match &self.entries[i].1 {
            Json::Null => None,
            // The path as the file spells it, for messages that point into the file.
            v => Some((v, self.path.key(&self.entries[i].0))),
        }
    }

    /// Member `key` as [`Obj::get`] gives it, or the error "missing; expected {expected}" at
    /// its path.
    pub(crate) fn require(
        &mut self,
        r: &Reader,
        key: &str,
        expected: &str,
    ) -> Result<(&'j Json, JPath), PolicyError> {
        match self.get(key) {
            Some(found) => Ok(found),
            None => Err(r.error(&self.path.key(key), format!("missing; expected {expected}"))),
        }
    }

    /// Whether member `key` is present, even as `null`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.find(key).is_some()
    }

    /// The keys not looked at, with their paths.
    pub(crate) fn unused(&self) -> Vec<(&'j str, JPath)> {
        self.entries
            .iter()
            .zip(&self.used)
            .filter(|(_, used)| !**used)
            .map(|((k, _), _)| (k.as_str(), self.path.key(k)))
            .collect()
    }

    /// All members in file order (for maps keyed by user-chosen names).
    pub(crate) fn members(&self) -> impl Iterator<Item = (&'j str, &'j Json, JPath)> + '_ {
        self.entries
            .iter()
            .map(move |(k, v)| (k.as_str(), v, self.path.key(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let err = parse_document(b"{\n  \"a\": [1,\n  }\n", "x.json").unwrap_err();
        match err {
            PolicyError::Syntax { line, column, .. } => {
                assert_eq!(line, 3);
                assert_eq!(column, 3);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let err = parse_document(br#"{"a": 1, "b": {"c": 1, "c": 2}}"#, "x.json").unwrap_err();
        assert!(err.to_string().contains("duplicate key \"c\""), "{err}");
        // Past the first 16 keys a set finds the repeats: a repeat of an early key and of a
        // late one are both refused, and 40 distinct keys are not.
        let object = |keys: &[String]| {
            let members: Vec<String> = keys.iter().map(|k| format!("{k:?}: 0")).collect();
            format!("{{{}}}", members.join(", "))
        };
        let distinct: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        assert!(parse_document(object(&distinct).as_bytes(), "x.json").is_ok());
        for (at, repeat) in [(20, "k3"), (30, "k25"), (16, "k0"), (17, "k16")] {
            let mut keys = distinct.clone();
            keys.insert(at, repeat.to_string());
            let err = parse_document(object(&keys).as_bytes(), "x.json").unwrap_err();
            let expected = format!("duplicate key {repeat:?}");
            assert!(err.to_string().contains(&expected), "{at} {repeat}: {err}");
        }
    }

    /// Go's key folding (`K` KELVIN SIGN is `k`, `ſ` is `s`, `ß` stays itself) finds the
    /// same first repeat whether an object is checked pairwise (up to 16 members) or through
    /// the folded keys (more).
    #[test]
    fn go_duplicates_are_found_alike_in_small_and_large_objects() {
        let entries = |keys: &[&str]| -> Vec<(String, Json)> {
            keys.iter().map(|k| (k.to_string(), Json::Null)).collect()
        };
        for filler in [0, 20] {
            let mut keys: Vec<String> = (0..filler).map(|i| format!("f{i}")).collect();
            keys.extend(["kind", "Skip", "other", "\u{212A}IND", "ſkip"].map(String::from));
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            assert_eq!(
                go_duplicate(&entries(&keys)),
                Some((filler, filler + 3)),
                "{filler}"
            );
            assert_eq!(
                go_duplicate(&entries(&keys[..filler + 3])),
                None,
                "{filler}"
            );
            let without_kelvin: Vec<&str> = keys
                .iter()
                .copied()
                .filter(|k| !k.ends_with("IND"))
                .collect();
            assert_eq!(
                go_duplicate(&entries(&without_kelvin)),
                Some((filler + 1, filler + 3))
            );
        }
        assert_eq!(go_duplicate(&entries(&["ss", "ß", "SS"])), Some((0, 2)));
        assert!(go_eq("\u{212A}", "k") && go_eq("ſ", "S") && !go_eq("ß", "ss"));
    }

    #[test]
    fn index_paths_spell_the_number() {
        for (i, spelt) in [(0, "$[0]"), (7, "$[7]"), (10, "$[10]"), (1234, "$[1234]")] {
            assert_eq!(JPath::root().index(i).as_str(), spelt);
        }
        let max = JPath::root().index(usize::MAX);
        assert_eq!(max.as_str(), format!("$[{}]", usize::MAX));
    }

    #[test]
    fn paths_quote_odd_keys() {
        let p = JPath::root()
            .key("syscalls")
            .index(3)
            .key("my thread")
            .key("9x");
        assert_eq!(p.as_str(), r#"$.syscalls[3]["my thread"]["9x"]"#);
    }

    #[test]
    fn numbers_keep_full_u64_range() {
        let v = parse_document(b"[18446744073709551615, -1, 1.5]", "x").unwrap();
        assert_eq!(
            v,
            Json::Arr(vec![Json::UInt(u64::MAX), Json::Int(-1), Json::Float(1.5)])
        );
    }
}
