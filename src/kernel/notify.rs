//! Seccomp user notification: installing a filter that returns a listener fd and handing the
//! listener to a supervisor (a "seccomp agent") the way the OCI runtime spec describes.
//!
//! The runtime-spec (config-linux.md, "Seccomp" and "The Container Process State"): the
//! runtime connects to the `AF_UNIX`/`SOCK_STREAM` socket at `listenerPath`, sends one
//! *container process state* JSON document as ordinary payload with the listener fd attached
//! as `SCM_RIGHTS` to the first `sendmsg(2)`, names that fd `seccompFd` in the `fds` array,
//! passes `listenerMetadata` as `metadata`, and closes the connection.
//!
//! Ordering matters because the filter is already in force while the fd is handed over: a
//! system call the filter sends to the (not yet informed) agent would block forever.
//! [`ListenerHandoff::connect`] therefore does everything that can be done before the
//! filter exists (connect, serialise), so that afterwards [`ListenerHandoff::send`] needs
//! only `sendmsg` (normally once) and `close`.
//!
//! Kernel facts used here (checked by the tests below on 6.18): the listener fd comes back
//! with `FD_CLOEXEC` set, so a following `execve` does not leak it to the sandboxed program;
//! `TSYNC` together with `NEW_LISTENER` is refused with `EINVAL` unless `TSYNC_ESRCH` is
//! also given (kernel/seccomp.c, `seccomp_set_mode_filter`).

use super::seccomp::{
    install_filter_raw, to_sock_filters, SECCOMP_FILTER_FLAG_NEW_LISTENER,
    SECCOMP_FILTER_FLAG_TSYNC, SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
};
use crate::bpf::Program;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The runtime-spec version whose container process state format [`ContainerProcessState`]
/// follows (the `fds`/`metadata` form appeared in v1.0.2).
pub const OCI_VERSION: &str = "1.0.2";

/// The name the runtime spec gives the listener fd in `fds`.
pub const SECCOMP_FD_NAME: &str = "seccompFd";

/// The container process state sent to a seccomp agent (runtime-spec config-linux.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerProcessState {
    #[serde(rename = "ociVersion")]
    pub oci_version: String,
    /// Names of the fds attached with `SCM_RIGHTS`, in order.
    pub fds: Vec<String>,
    /// The process the filter is attached to.
    pub pid: i32,
    /// `listenerMetadata`, opaque to the runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    pub state: ContainerState,
}

/// The runtime-spec `state` object (runtime.md, "State").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerState {
    #[serde(rename = "ociVersion")]
    pub oci_version: String,
    pub id: String,
    /// `creating`, `created`, `running` or `stopped`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// Absolute path of the bundle directory.
    pub bundle: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl ContainerProcessState {
    /// The state for a listener attached to process `pid` that is about to become the
    /// container's process (status `creating`, as runc reports it at that point).
    pub fn for_listener(id: &str, pid: i32, bundle: &str, metadata: Option<&str>) -> Self {
        ContainerProcessState {
            oci_version: OCI_VERSION.to_string(),
            fds: vec![SECCOMP_FD_NAME.to_string()],
            pid,
            metadata: metadata.map(str::to_string),
            state: ContainerState {
                oci_version: OCI_VERSION.to_string(),
                id: id.to_string(),
                status: "creating".to_string(),
                pid: Some(pid),
                bundle: bundle.to_string(),
                annotations: BTreeMap::new(),
            },
        }
    }
}

/// Attaches `prog` with `SECCOMP_FILTER_FLAG_NEW_LISTENER` (plus `flags`) and returns the
/// listener fd. `TSYNC_ESRCH` is added when `flags` has `TSYNC`, which the kernel requires
/// for that combination. `EBUSY` means an older filter of this task already has a listener.
pub fn install_filter_with_listener(prog: &Program, flags: u32) -> io::Result<OwnedFd> {
    install_raw_with_listener(&to_sock_filters(prog), flags)
}

/// [`install_filter_with_listener`] for a raw filter. Allocates nothing, so it is safe
/// between `fork` and `exec`.
pub fn install_raw_with_listener(filter: &[libc::sock_filter], flags: u32) -> io::Result<OwnedFd> {
    let mut flags = flags | SECCOMP_FILTER_FLAG_NEW_LISTENER;
    if flags & SECCOMP_FILTER_FLAG_TSYNC != 0 {
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
    let fd = install_filter_raw(filter, flags)?;
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("seccomp returned no listener fd"))?;
    // SAFETY: with NEW_LISTENER a successful seccomp(2) returns a new fd that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A connection to a seccomp agent, made before the filter is installed, with the state
/// document already serialised.
#[derive(Debug)]
pub struct ListenerHandoff {
    stream: UnixStream,
    payload: Vec<u8>,
}

impl ListenerHandoff {
    /// Connects to the agent's socket at `path` and prepares `state` for sending.
    pub fn connect(path: &Path, state: &ContainerProcessState) -> io::Result<ListenerHandoff> {
        let payload = serde_json::to_vec(state).map_err(io::Error::other)?;
        let stream = UnixStream::connect(path)?;
        Ok(ListenerHandoff { stream, payload })
    }

    /// The JSON document that [`send`](Self::send) will write.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// Sends the state with `listener` attached and closes the connection.
    pub fn send(self, listener: BorrowedFd<'_>) -> io::Result<()> {
        send_with_fds(self.stream.as_fd(), &self.payload, &[listener])
    }
}

/// Writes all of `payload` to the stream socket `sock`, attaching `fds` (`SCM_RIGHTS`) to
/// the first `sendmsg` only, as the runtime spec requires when several calls are needed.
/// Uses `MSG_NOSIGNAL`: a vanished peer is an `EPIPE` error, not a `SIGPIPE`.
pub fn send_with_fds(
    sock: BorrowedFd<'_>,
    payload: &[u8],
    fds: &[BorrowedFd<'_>],
) -> io::Result<()> {
    const MAX_FDS: usize = 8;
    if payload.is_empty() {
        // SCM_RIGHTS needs at least one byte of payload on a stream socket.
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty payload"));
    }
    if fds.len() > MAX_FDS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "too many fds for one message",
        ));
    }
    // A u64 array keeps the control buffer aligned for `cmsghdr`.
    let mut control = [0u64; 8];
    let mut sent = 0;
    while sent < payload.len() {
        let rest = &payload[sent..];
        let mut iov = libc::iovec {
            iov_base: rest.as_ptr() as *mut libc::c_void,
            iov_len: rest.len(),
        };
        // SAFETY: msghdr is plain old data; all-zero is "no name, no control".
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if sent == 0 && !fds.is_empty() {
            let data_len = std::mem::size_of_val(fds) as u32;
            // SAFETY: CMSG_* only compute sizes and pointers inside `control`, which is
            // large enough: CMSG_SPACE(8 * 4) = 48 bytes <= 64.
            unsafe {
                let space = libc::CMSG_SPACE(data_len) as usize;
                debug_assert!(space <= std::mem::size_of_val(&control));
                msg.msg_control = control.as_mut_ptr().cast();
                msg.msg_controllen = space as _;
                let cmsg = libc::CMSG_FIRSTHDR(&msg);
                (*cmsg).cmsg_level = libc::SOL_SOCKET;
                (*cmsg).cmsg_type = libc::SCM_RIGHTS;
                (*cmsg).cmsg_len = libc::CMSG_LEN(data_len) as _;
                let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
                for (i, fd) in fds.iter().enumerate() {
                    data.add(i).write_unaligned(fd.as_raw_fd());
                }
            }
        }
        // SAFETY: `msg` points at `iov` and `control`, both alive for the call.
        let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        sent += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::insn::*;
    use crate::bpf::Insn;
    use std::io::{Read, Write};

    /// Receives one message with up to 4 fds, with raw `recvmsg` (independent of the sender).
    fn recv_with_fds(sock: BorrowedFd<'_>) -> (Vec<u8>, Vec<OwnedFd>) {
        let mut buf = vec![0u8; 4096];
        let mut control = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: plain recvmsg into buffers that outlive the call; CMSG_* walk `control`.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, 0);
            assert!(n >= 0, "recvmsg: {}", io::Error::last_os_error());
            buf.truncate(n as usize);
            let mut fds = Vec::new();
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                assert_eq!((*cmsg).cmsg_level, libc::SOL_SOCKET);
                assert_eq!((*cmsg).cmsg_type, libc::SCM_RIGHTS);
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
            (buf, fds)
        }
    }

    #[test]
    fn the_payload_arrives_with_a_working_fd() {
        let (a, b) = UnixStream::pair().unwrap();
        // The fd to pass: one end of another pair; what is written to it reaches `far`.
        let (mut near, mut far) = UnixStream::pair().unwrap();
        send_with_fds(a.as_fd(), b"{\"x\":1}", &[near.as_fd()]).unwrap();
        drop(a);
        let (payload, fds) = recv_with_fds(b.as_fd());
        assert_eq!(payload, b"{\"x\":1}");
        assert_eq!(fds.len(), 1);
        assert_ne!(fds[0].as_raw_fd(), near.as_raw_fd(), "a new fd number");
        let mut received = UnixStream::from(fds.into_iter().next().unwrap());
        received.write_all(b"via fd").unwrap();
        near.write_all(b"!").unwrap();
        drop((received, near));
        let mut got = String::new();
        far.read_to_string(&mut got).unwrap();
        assert_eq!(got, "via fd!");
    }

    #[test]
    fn the_state_document_has_the_runtime_spec_shape() {
        let s = ContainerProcessState::for_listener("c1", 4422, "/containers/redis", Some("K=V"));
        let v: serde_json::Value = serde_json::to_value(&s).unwrap();
        // The example of runtime-spec config-linux.md, "The Container Process State".
        let expected = serde_json::json!({
            "ociVersion": "1.0.2",
            "fds": ["seccompFd"],
            "pid": 4422,
            "metadata": "K=V",
            "state": {
                "ociVersion": "1.0.2",
                "id": "c1",
                "status": "creating",
                "pid": 4422,
                "bundle": "/containers/redis"
            }
        });
        assert_eq!(v, expected);
    }

    /// In a child: installs a filter sending `getppid` to the listener, hands the listener
    /// over a socketpair, then calls `getppid`; the parent answers as an agent.
    #[test]
    fn a_listener_handed_over_answers_the_childs_syscall() {
        const ANSWER: i64 = 4242;
        let (parent_sock, child_sock) = UnixStream::pair().unwrap();
        let prog = Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_getppid as u32, 0, 1),
            Insn::ret(libc::SECCOMP_RET_USER_NOTIF),
            Insn::ret(libc::SECCOMP_RET_ALLOW),
        ]);
        let filters = to_sock_filters(&prog);
        let payload = b"state";
        // SAFETY: the child makes raw system calls only (no allocation) and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: raw syscalls in the child.
            unsafe {
                let code = if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0)
                    != 0
                {
                    10
                } else {
                    let flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
                    match install_filter_raw(&filters, flags) {
                        Err(_) => 11,
                        Ok(fd) => {
                            let fd = fd as i32;
                            let cloexec = libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0;
                            let listener = BorrowedFd::borrow_raw(fd);
                            if send_with_fds(child_sock.as_fd(), payload, &[listener]).is_err() {
                                12
                            } else if libc::getppid() as i64 != ANSWER {
                                13
                            } else if !cloexec {
                                14
                            } else {
                                0
                            }
                        }
                    }
                };
                libc::_exit(code);
            }
        }
        drop(child_sock);
        let (got, fds) = recv_with_fds(parent_sock.as_fd());
        assert_eq!(got, payload);
        assert_eq!(fds.len(), 1);
        let listener = &fds[0];
        // SAFETY: zeroed notif/resp structs are valid inputs for the ioctls.
        unsafe {
            let mut req: libc::seccomp_notif = std::mem::zeroed();
            let r = libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut req,
            );
            assert_eq!(r, 0, "NOTIF_RECV: {}", io::Error::last_os_error());
            assert_eq!(req.pid as i32, pid);
            assert_eq!(req.data.nr, libc::SYS_getppid as i32);
            let mut resp: libc::seccomp_notif_resp = std::mem::zeroed();
            resp.id = req.id;
            resp.val = ANSWER;
            let r = libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &mut resp,
            );
            assert_eq!(r, 0, "NOTIF_SEND: {}", io::Error::last_os_error());
        }
        let mut status = 0;
        // SAFETY: our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child status {status:#x}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "child failed step (10..14)");
    }

    #[test]
    fn tsync_with_a_listener_needs_tsync_esrch() {
        // In a child, since the filter stays: the kernel rejects the bare combination.
        let filters = to_sock_filters(&Program::new(vec![Insn::ret(libc::SECCOMP_RET_ALLOW)]));
        // SAFETY: raw syscalls in the child, which `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: raw syscalls only.
            unsafe {
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0);
                let bare = install_filter_raw(
                    &filters,
                    SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC,
                );
                let code = match bare {
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                        match install_raw_with_listener(&filters, SECCOMP_FILTER_FLAG_TSYNC) {
                            Ok(fd) if fd.as_raw_fd() > 2 => 0,
                            _ => 2,
                        }
                    }
                    _ => 1,
                };
                libc::_exit(code);
            }
        }
        let mut status = 0;
        // SAFETY: our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 0);
    }
}
