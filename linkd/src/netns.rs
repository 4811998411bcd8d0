//! The packet link's two network namespaces and their TUN devices, made as
//! `kit/delayline/netns.py` makes them: the forwarder moves itself into a new namespace with
//! `unshare(CLONE_NEWNET)` (from inside a user namespace of its own when not root), keeps the
//! namespace's handle at a fixed descriptor (the kit starts the server and the clients in it
//! with `nsenter --net=/proc/<pid>/fd/<fd>`), opens a non-persistent TUN device `kit0` there
//! and sets `lo`, the /32 address with its peer and the MTU with `ip`. Nothing has a name: the
//! namespaces and devices go with the forwarder's descriptors and processes, even on SIGKILL.

use crate::sys;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Command, Stdio};

pub const DEVICE: &str = "kit0";
pub const CLIENT_NS_FD: RawFd = 200;
pub const SERVER_NS_FD: RawFd = 201;
pub const CLIENT_ADDR: &str = "10.203.0.1";
pub const SERVER_ADDR: &str = "10.203.0.2";
const TUNSETIFF: libc::c_ulong = 0x4004_54CA;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54D0;
const TUN_F_CSUM: libc::c_ulong = 0x01;
const TUN_F_TSO4: libc::c_ulong = 0x02;
/// The TUN device's own ring, in bytes of packets (as netns.py: `DEVICE_QUEUE_BYTES`).
const DEVICE_QUEUE_BYTES: u32 = 32 * 1024 * 1024;

/// Why the namespaces could not be made: a bad setting (exit 2) or the system (exit 3).
pub enum SetupError {
    Usage(String),
    System(String),
}

/// One namespace: its handle (kept at a fixed descriptor) and the TUN device in it.
pub struct Side {
    pub ns: OwnedFd,
    pub tun: OwnedFd,
}

fn system(what: &str, err: &io::Error) -> SetupError {
    SetupError::System(format!("{what}: {}", sys::strerror(err)))
}

/// Whether this process must first enter a user namespace of its own (not root).
pub fn in_user_namespace() -> bool {
    // SAFETY: plain syscall.
    unsafe { libc::geteuid() != 0 }
}

/// Move this (still single-threaded) process into a new user namespace where its user is
/// root, so it may create network namespaces and TUN devices there.
pub fn enter_user_namespace() -> Result<(), SetupError> {
    // SAFETY: plain syscalls.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: plain syscall.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
        return Err(system(
            "cannot create a user namespace",
            &io::Error::last_os_error(),
        ));
    }
    let maps = [
        ("setgroups", "deny".to_string()),
        ("uid_map", format!("0 {uid} 1")),
        ("gid_map", format!("0 {gid} 1")),
    ];
    for (name, text) in maps {
        fs::write(format!("/proc/self/{name}"), text)
            .map_err(|e| system(&format!("cannot write /proc/self/{name}"), &e))?;
    }
    Ok(())
}

/// The namespace's default TCP congestion control (a per-namespace sysctl).
fn set_congestion(name: &str) -> Result<(), SetupError> {
    if fs::write("/proc/sys/net/ipv4/tcp_congestion_control", name).is_ok() {
        return Ok(());
    }
    let known = fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
    Err(SetupError::Usage(format!(
        "--cc: '{name}' is not available here (this kernel has: {})",
        known.trim()
    )))
}

fn ip(args: &[&str]) -> Result<(), SetupError> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| system("cannot run ip", &e))?;
    if out.status.success() {
        return Ok(());
    }
    let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(SetupError::System(format!("ip {}: {why}", args.join(" "))))
}

/// A non-persistent TUN device `kit0` in the current namespace (no packet-info header);
/// `offload`: with a `virtio_net_hdr` before each packet and TCP/IPv4 segmentation offload.
fn open_tun(offload: bool) -> Result<OwnedFd, SetupError> {
    let flags = libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path.
    let raw = unsafe { libc::open(c"/dev/net/tun".as_ptr(), flags) };
    if raw < 0 {
        return Err(system("cannot open /dev/net/tun", &io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor, ours.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // struct ifreq: a 16-byte name, then the flags (the rest of its 40 bytes unused here).
    let mut ifreq = [0u8; 40];
    ifreq[..DEVICE.len()].copy_from_slice(DEVICE.as_bytes());
    let flags = IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 };
    ifreq[16..18].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which the buffer holds.
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, ifreq.as_mut_ptr()) } != 0 {
        return Err(system(
            "cannot create the TUN device",
            &io::Error::last_os_error(),
        ));
    }
    let offloads = TUN_F_CSUM | TUN_F_TSO4;
    // SAFETY: TUNSETOFFLOAD takes its flags by value.
    if offload && unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, offloads) } != 0 {
        let err = io::Error::last_os_error();
        return Err(system("cannot set the TUN device's offloads", &err));
    }
    Ok(fd)
}

/// The namespace handle of the calling thread, kept at `keep_at` (close-on-exec).
fn keep_namespace(keep_at: RawFd) -> Result<OwnedFd, SetupError> {
    // SAFETY: a NUL-terminated path.
    let raw = unsafe {
        libc::open(
            c"/proc/thread-self/ns/net".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if raw < 0 {
        return Err(system("cannot open the namespace", &io::Error::last_os_error()));
    }
    // SAFETY: dup3 onto a fixed descriptor number; the original is closed right after.
    let kept = unsafe { libc::dup3(raw, keep_at, libc::O_CLOEXEC) };
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(raw) };
    if kept < 0 {
        return Err(system("cannot keep the namespace", &io::Error::last_os_error()));
    }
    // SAFETY: `keep_at` now holds the handle, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(kept) })
}

fn device_queue_packets(mtu: u32) -> u32 {
    (DEVICE_QUEUE_BYTES / mtu.max(1)).max(1000)
}

/// A new namespace (this process moves into it) with `lo` and the TUN device up.
pub fn new_side(
    addr: &str,
    peer: &str,
    mtu: u32,
    keep_at: RawFd,
    congestion: &str,
    offload: bool,
) -> Result<Side, SetupError> {
    // SAFETY: plain syscall; the process is single-threaded here.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(system(
            "cannot create a network namespace",
            &io::Error::last_os_error(),
        ));
    }
    if !congestion.is_empty() {
        set_congestion(congestion)?;
    }
    let ns = keep_namespace(keep_at)?;
    let tun = open_tun(offload)?;
    ip(&["link", "set", "lo", "up"])?;
    ip(&["addr", "add", addr, "peer", peer, "dev", DEVICE])?;
    let (mtu_text, queue) = (mtu.to_string(), device_queue_packets(mtu).to_string());
    ip(&[
        "link",
        "set",
        DEVICE,
        "mtu",
        &mtu_text,
        "txqueuelen",
        &queue,
        "up",
    ])?;
    Ok(Side { ns, tun })
}

fn setns(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall on a namespace handle we hold.
    sys::check(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }).map(|_| ())
}

/// Packets the namespace's TUN device dropped before the forwarder read them (its tx drops
/// in `/proc/net/dev`): 0 unless its ring overflowed, or when it cannot be read.
pub fn device_drops(ns: RawFd) -> u64 {
    let Ok(home) = fs::File::open("/proc/thread-self/ns/net") else {
        return 0;
    };
    if setns(ns).is_err() {
        return 0;
    }
    let text = fs::read_to_string("/proc/thread-self/net/dev").unwrap_or_default();
    let _ = setns(home.as_raw_fd());
    for line in text.lines() {
        let Some((name, counters)) = line.split_once(':') else {
            continue;
        };
        if name.trim() == DEVICE {
            // rx: 8 fields; tx: bytes packets errs drop
            return counters
                .split_whitespace()
                .nth(11)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
        }
    }
    0
}
