//! Kernel versions. Both the policy layer (moby's `minKernel`) and the bytecode layer (which
//! allow-cache behaviour a kernel has) need them, so they live at the bottom with the
//! architectures.

use std::fmt;
use std::str::FromStr;

/// A Linux kernel version, major and minor (what moby compares, and what decides the
/// allow-cache behaviour; stable-series differences are noted where they matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct KernelVersion {
    pub major: u32,
    pub minor: u32,
}

/// Error parsing a [`KernelVersion`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid kernel version `{0}`: expected MAJOR.MINOR such as 6.18, or a `uname -r` release such as 5.15.0-91-generic")]
pub struct ParseKernelVersionError(pub String);

impl KernelVersion {
    pub const fn new(major: u32, minor: u32) -> Self {
        KernelVersion { major, minor }
    }

    /// Parses a kernel release as `uname -r` prints it (`5.15.0-91-generic`, `3.12-1-amd64`,
    /// `6.18`): the leading `major.minor`, the rest ignored, as moby's `parseRelease` does
    /// (`fmt.Sscanf(release, "%d.%d")`).
    ///
    /// ```
    /// use secopt::arch::KernelVersion;
    /// assert_eq!(KernelVersion::parse_release("5.15.0-91-generic"), Some(KernelVersion::new(5, 15)));
    /// assert_eq!(KernelVersion::parse_release("3.12-rc5"), Some(KernelVersion::new(3, 12)));
    /// assert_eq!(KernelVersion::parse_release("linux"), None);
    /// ```
    pub fn parse_release(release: &str) -> Option<KernelVersion> {
        let s = release.trim_start();
        let (major, rest) = leading_number(s)?;
        let rest = rest.strip_prefix('.')?;
        let (minor, _) = leading_number(rest)?;
        Some(KernelVersion { major, minor })
    }

    /// The running kernel's version (`uname(2)`).
    pub fn running() -> std::io::Result<KernelVersion> {
        let release = uname_release()?;
        KernelVersion::parse_release(&release).ok_or_else(|| {
            std::io::Error::other(format!("cannot parse kernel release {release:?}"))
        })
    }
}

fn leading_number(s: &str) -> Option<(u32, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let n = s[..digits].parse().ok()?;
    Some((n, &s[digits..]))
}

fn uname_release() -> std::io::Result<String> {
    // SAFETY: `utsname` is plain old data, so all-zero is a valid value; `uname` only
    // writes into the struct we pass.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable `utsname`.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let bytes: Vec<u8> = uts
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl FromStr for KernelVersion {
    type Err = ParseKernelVersionError;

    /// Accepts what [`KernelVersion::parse_release`] accepts (`5.15`, `5.15.0-91-generic`).
    fn from_str(s: &str) -> Result<Self, ParseKernelVersionError> {
        KernelVersion::parse_release(s).ok_or_else(|| ParseKernelVersionError(s.to_string()))
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_releases_and_rejects_words() {
        assert_eq!(
            "6.18.44-fc-v669".parse::<KernelVersion>(),
            Ok(KernelVersion::new(6, 18))
        );
        assert_eq!(
            "5.15".parse::<KernelVersion>(),
            Ok(KernelVersion::new(5, 15))
        );
        assert!("six".parse::<KernelVersion>().is_err());
        assert!("6".parse::<KernelVersion>().is_err());
        assert!(KernelVersion::new(5, 11) < KernelVersion::new(5, 12));
        assert!(KernelVersion::new(5, 11) > KernelVersion::new(4, 20));
        let running = KernelVersion::running().unwrap();
        assert!(running.major >= 3);
    }
}
