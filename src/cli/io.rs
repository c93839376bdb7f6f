//! Reading programs and writing outputs for the CLI: `-` is stdin/stdout, raw and assembly
//! inputs are told apart, and files are written atomically.

use super::Failure;
use crate::bpf::{asm, validate, Program};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// How an input program is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Decide from the content: assembly if it is UTF-8 text without NUL bytes, raw otherwise.
    Auto,
    /// Raw little-endian `struct sock_filter` array (what `seccomp(2)` and `bwrap --seccomp` take).
    Raw,
    /// secopt assembly text.
    Asm,
}

/// Human name for an input path in messages.
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Reads a whole input file, or stdin for `-`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Failure::input(format!("<stdin>: cannot read: {e}")))?;
    } else {
        buf = std::fs::read(path)
            .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    }
    Ok(buf)
}

/// Whether bytes look like assembly text rather than a raw filter.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// Loads a program (raw or assembly) and validates it as the kernel would.
/// Every failure names the file and the place (instruction index or line:column).
pub fn load_program(path: &Path, format: InputFormat) -> Result<Program, Failure> {
    let bytes = read_input(path)?;
    let name = display_name(path);
    let format = match format {
        InputFormat::Auto if looks_like_text(&bytes) => InputFormat::Asm,
        InputFormat::Auto => InputFormat::Raw,
        f => f,
    };
    let prog = match format {
        InputFormat::Asm => {
            let text = std::str::from_utf8(&bytes)
                .map_err(|e| Failure::input(format!("{name}: not UTF-8 text: {e}")))?;
            asm::assemble(text).map_err(|e| Failure::input(format!("{name}:{e}")))?
        }
        _ => Program::from_raw(&bytes).map_err(|e| Failure::input(format!("{name}: {e}")))?,
    };
    validate::validate(&prog)
        .map_err(|e| Failure::input(format!("{name}: the kernel would reject this filter: {e}")))?;
    Ok(prog)
}

/// Writes `data` to `path` atomically (a temporary file in the same directory, then
/// `rename`), or to stdout for `-`. A failed write leaves no partial file behind.
pub fn write_output(path: &Path, data: &[u8]) -> Result<(), Failure> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(data)
            .and_then(|_| out.flush())
            .map_err(|e| Failure::input(format!("<stdout>: cannot write: {e}")));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| Failure::input(format!("{}: not a file path", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.secopt-tmp.{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Failure::input(format!("{}: cannot write: {e}", path.display()))
    })
}
