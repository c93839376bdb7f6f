//! Seccomp return values: a 16-bit action and 16 bits of data.
//!
//! The kernel looks at the full top half (`SECCOMP_RET_ACTION_FULL`) to pick the action; an
//! action it does not know kills the process. Stacked filters combine by taking the most
//! restrictive action, which is the *smallest* action when read as a signed 32-bit number
//! (`KILL_PROCESS` = `0x80000000` is the most restrictive, `ALLOW` the least).
//!
//! Text form (used by the assembler, the disassembler and every report): `ALLOW`, `LOG`,
//! `KILL_PROCESS`, `KILL_THREAD`, `TRAP`, `USER_NOTIF`, and with data `ERRNO(1)`, `TRACE(7)`,
//! `TRAP(3)`. Any action may carry data in parentheses (`ALLOW(5)` is `0x7fff0005`) so that every
//! 32-bit value has exactly one spelling that parses back to it; values whose action is unknown
//! print as hex (`0x12340000`).

use std::fmt;
use std::str::FromStr;

pub const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
pub const SECCOMP_RET_KILL_THREAD: u32 = 0x0000_0000;
pub const SECCOMP_RET_TRAP: u32 = 0x0003_0000;
pub const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
pub const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
pub const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;
pub const SECCOMP_RET_LOG: u32 = 0x7ffc_0000;
pub const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
pub const SECCOMP_RET_ACTION_FULL: u32 = 0xffff_0000;
pub const SECCOMP_RET_DATA: u32 = 0x0000_ffff;
/// Largest errno the kernel passes on; larger `ERRNO` data is clamped to it.
pub const MAX_ERRNO: u32 = 4095;

/// The known seccomp actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    KillProcess,
    KillThread,
    Trap,
    Errno,
    UserNotif,
    Trace,
    Log,
    Allow,
}

impl Action {
    pub const ALL: [Action; 8] = [
        Action::KillProcess,
        Action::KillThread,
        Action::Trap,
        Action::Errno,
        Action::UserNotif,
        Action::Trace,
        Action::Log,
        Action::Allow,
    ];

    /// The action bits (`SECCOMP_RET_*`).
    pub const fn bits(self) -> u32 {
        match self {
            Action::KillProcess => SECCOMP_RET_KILL_PROCESS,
            Action::KillThread => SECCOMP_RET_KILL_THREAD,
            Action::Trap => SECCOMP_RET_TRAP,
            Action::Errno => SECCOMP_RET_ERRNO,
            Action::UserNotif => SECCOMP_RET_USER_NOTIF,
            Action::Trace => SECCOMP_RET_TRACE,
            Action::Log => SECCOMP_RET_LOG,
            Action::Allow => SECCOMP_RET_ALLOW,
        }
    }

    /// Canonical name as printed.
    pub const fn name(self) -> &'static str {
        match self {
            Action::KillProcess => "KILL_PROCESS",
            Action::KillThread => "KILL_THREAD",
            Action::Trap => "TRAP",
            Action::Errno => "ERRNO",
            Action::UserNotif => "USER_NOTIF",
            Action::Trace => "TRACE",
            Action::Log => "LOG",
            Action::Allow => "ALLOW",
        }
    }

    /// Whether the data half means something to the kernel for this action (so it is always
    /// printed, even when zero).
    pub const fn takes_data(self) -> bool {
        matches!(self, Action::Errno | Action::Trace)
    }

    fn from_bits(bits: u32) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.bits() == bits)
    }

    fn from_name(name: &str) -> Option<Action> {
        let upper = name.to_ascii_uppercase();
        let n = upper.strip_prefix("SCMP_ACT_").unwrap_or(&upper);
        let n = n.strip_prefix("SECCOMP_RET_").unwrap_or(n);
        Some(match n {
            "KILL_PROCESS" => Action::KillProcess,
            "KILL_THREAD" | "KILL" => Action::KillThread,
            "TRAP" => Action::Trap,
            "ERRNO" => Action::Errno,
            "USER_NOTIF" | "NOTIFY" => Action::UserNotif,
            "TRACE" => Action::Trace,
            "LOG" => Action::Log,
            "ALLOW" => Action::Allow,
            _ => return None,
        })
    }
}

/// A filter's 32-bit return value.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct RetVal(pub u32);

impl RetVal {
    pub const ALLOW: RetVal = RetVal(SECCOMP_RET_ALLOW);
    pub const KILL_PROCESS: RetVal = RetVal(SECCOMP_RET_KILL_PROCESS);
    pub const KILL_THREAD: RetVal = RetVal(SECCOMP_RET_KILL_THREAD);
    pub const LOG: RetVal = RetVal(SECCOMP_RET_LOG);

    /// `action` with `data` in the low 16 bits.
    pub const fn new(action: Action, data: u16) -> RetVal {
        RetVal(action.bits() | data as u32)
    }
    /// `ERRNO(errno)`.
    pub const fn errno(errno: u16) -> RetVal {
        RetVal::new(Action::Errno, errno)
    }
    /// The known action, or `None` when the action bits are not one the kernel defines (the
    /// kernel then kills the process).
    pub fn action(self) -> Option<Action> {
        Action::from_bits(self.0 & SECCOMP_RET_ACTION_FULL)
    }
    /// The data half.
    pub const fn data(self) -> u16 {
        (self.0 & SECCOMP_RET_DATA) as u16
    }
    /// Precedence when stacked filters disagree: lower is more restrictive (the kernel compares
    /// the action bits as signed 32-bit numbers).
    pub const fn restrictiveness(self) -> i32 {
        (self.0 & SECCOMP_RET_ACTION_FULL) as i32
    }
}

impl fmt::Display for RetVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action() {
            Some(a) if a.takes_data() || self.data() != 0 => {
                write!(f, "{}({})", a.name(), self.data())
            }
            Some(a) => f.write_str(a.name()),
            None => write!(f, "0x{:08x}", self.0),
        }
    }
}

impl fmt::Debug for RetVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self} (0x{:08x})", self.0)
    }
}

/// Error parsing an action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid action `{text}`: {reason}; expected ALLOW, LOG, KILL_PROCESS, KILL_THREAD, TRAP, USER_NOTIF, ERRNO(n), TRACE(n), or a number")]
pub struct ParseActionError {
    pub text: String,
    pub reason: &'static str,
}

/// Parses an integer in decimal, `0x` hex, `0o` octal or `0b` binary.
pub fn parse_u32(s: &str) -> Option<u32> {
    let s = s.trim();
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(o) = s.strip_prefix("0o") {
        (o, 8)
    } else if let Some(b) = s.strip_prefix("0b") {
        (b, 2)
    } else {
        (s, 10)
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    u32::from_str_radix(&digits.replace('_', ""), radix).ok()
}

impl FromStr for RetVal {
    type Err = ParseActionError;
    fn from_str(s: &str) -> Result<RetVal, ParseActionError> {
        let err = |reason| ParseActionError {
            text: s.to_string(),
            reason,
        };
        let t = s.trim();
        if t.starts_with(|c: char| c.is_ascii_digit()) {
            return parse_u32(t).map(RetVal).ok_or(err("not a 32-bit number"));
        }
        let (name, data) = match t.find('(') {
            Some(open) => {
                let close = t
                    .strip_suffix(')')
                    .ok_or(err("missing `)` after the data"))?;
                let data = parse_u32(&close[open + 1..]).ok_or(err("data is not a number"))?;
                if data > SECCOMP_RET_DATA {
                    return Err(err("data does not fit in 16 bits"));
                }
                (&t[..open], data as u16)
            }
            None => (t, 0),
        };
        let action = Action::from_name(name.trim()).ok_or(err("unknown action name"))?;
        Ok(RetVal::new(action, data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_uapi_header_values() {
        // Values from include/uapi/linux/seccomp.h.
        assert_eq!("ALLOW".parse::<RetVal>().unwrap().0, 0x7fff_0000);
        assert_eq!("ERRNO(1)".parse::<RetVal>().unwrap().0, 0x0005_0001);
        assert_eq!("SCMP_ACT_KILL".parse::<RetVal>().unwrap().0, 0);
        assert_eq!("kill_process".parse::<RetVal>().unwrap().0, 0x8000_0000);
        assert_eq!("TRACE(0x10)".parse::<RetVal>().unwrap().0, 0x7ff0_0010);
        assert_eq!("NOTIFY".parse::<RetVal>().unwrap().0, 0x7fc0_0000);
        assert!("ERRNO(70000)".parse::<RetVal>().is_err());
        assert!("FOO".parse::<RetVal>().is_err());
    }

    #[test]
    fn every_value_prints_to_a_spelling_that_parses_back() {
        for v in [
            0u32,
            1,
            0x7fff_0000,
            0x7fff_0005,
            0x0005_0000,
            0x1234_0000,
            0xffff_ffff,
            0x8000_0001,
        ] {
            let s = RetVal(v).to_string();
            assert_eq!(s.parse::<RetVal>().unwrap(), RetVal(v), "{s}");
        }
    }

    #[test]
    fn kill_process_is_most_restrictive() {
        let order = [
            RetVal::KILL_PROCESS,
            RetVal::KILL_THREAD,
            RetVal::new(Action::Trap, 0),
            RetVal::errno(1),
            RetVal::new(Action::UserNotif, 0),
            RetVal::new(Action::Trace, 0),
            RetVal::LOG,
            RetVal::ALLOW,
        ];
        for w in order.windows(2) {
            assert!(w[0].restrictiveness() < w[1].restrictiveness());
        }
    }
}
