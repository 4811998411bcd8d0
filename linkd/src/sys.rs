//! Thin wrappers over the Linux calls the line uses: owned descriptors, epoll, timerfd,
//! eventfd, pipes and splice, sockets. Every error is an `io::Error` from errno.

use std::ffi::CStr;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn check_size(ret: libc::ssize_t) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    let fd = check(fd)?;
    // SAFETY: a descriptor the kernel just returned is ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The text Python's `OSError.strerror` would give ("Connection refused").
pub fn strerror(err: &io::Error) -> String {
    match err.raw_os_error() {
        // SAFETY: strerror returns a static, NUL-terminated string for any errno.
        Some(code) => unsafe { CStr::from_ptr(libc::strerror(code)) }
            .to_string_lossy()
            .into_owned(),
        None => err.to_string(),
    }
}

/// Python's exception class name for an errno (a peer reset is "ConnectionResetError").
pub fn error_kind(err: &io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(libc::ECONNRESET) => "ConnectionResetError",
        Some(libc::EPIPE) | Some(libc::ESHUTDOWN) => "BrokenPipeError",
        Some(libc::ECONNABORTED) => "ConnectionAbortedError",
        Some(libc::ECONNREFUSED) => "ConnectionRefusedError",
        Some(libc::ETIMEDOUT) => "TimeoutError",
        _ => "OSError",
    }
}

pub fn monotonic_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Timers fire when asked, not up to 50 us later (the default slack of a normal thread);
/// threads started afterwards inherit it.
pub fn tight_timer_slack() {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

pub struct Epoll {
    fd: OwnedFd,
}

pub const IN: u32 = libc::EPOLLIN as u32;
pub const OUT: u32 = libc::EPOLLOUT as u32;
pub const ERR: u32 = (libc::EPOLLERR | libc::EPOLLHUP) as u32;

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall.
        Ok(Epoll {
            fd: owned(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?,
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: a valid event for a descriptor we hold.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) }).map(|_| ())
    }

    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, events, token)
    }

    pub fn modify(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, events, token)
    }

    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Ready (token, events); `timeout_ms` -1 waits without end.
    pub fn wait(&self, out: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        loop {
            // SAFETY: `out` is a writable array of its length.
            let n = unsafe {
                libc::epoll_wait(
                    self.fd.as_raw_fd(),
                    out.as_mut_ptr(),
                    out.len() as i32,
                    timeout_ms,
                )
            };
            match check(n) {
                Ok(n) => return Ok(n as usize),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// An absolute CLOCK_MONOTONIC deadline on a timerfd (the kernel's resolution).
pub struct Timer {
    fd: OwnedFd,
    armed_ns: i64,
}

impl Timer {
    pub fn new() -> io::Result<Self> {
        let flags = libc::TFD_NONBLOCK | libc::TFD_CLOEXEC;
        // SAFETY: plain syscall.
        let fd = owned(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) })?;
        Ok(Timer { fd, armed_ns: 0 })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Fire at `deadline_ns` (0: disarm); a no-op when already set there.
    pub fn set(&mut self, deadline_ns: i64) {
        if deadline_ns == self.armed_ns {
            return;
        }
        self.armed_ns = deadline_ns;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: deadline_ns / 1_000_000_000,
                tv_nsec: deadline_ns % 1_000_000_000,
            },
        };
        // SAFETY: a valid itimerspec; an absolute time in the past fires at once.
        unsafe { libc::timerfd_settime(self.fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// After it fired: read the expiry count (and forget the deadline it had).
    pub fn drain(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: an 8-byte buffer for the expiry count.
        unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), 8) };
        self.armed_ns = 0;
    }
}

/// A readable-forever flag: once `raise`d it stays readable for every epoll that watches it.
pub struct Flag {
    fd: OwnedFd,
}

impl Flag {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall.
        let fd = owned(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        Ok(Flag { fd })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn raise(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: eight bytes to an eventfd.
        unsafe { libc::write(self.fd(), one.as_ptr().cast(), 8) };
    }
}

pub struct Pipe {
    pub r: OwnedFd,
    pub w: OwnedFd,
}

impl Pipe {
    /// A non-blocking pipe that holds `bytes` (None when the kernel refuses that size: the
    /// user's pipe pages are used up, or descriptors).
    pub fn with_size(bytes: usize) -> Option<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: a two-int array for the pipe's ends.
        let ok = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if ok < 0 {
            return None;
        }
        // SAFETY: both ends are new and ours.
        let pipe = unsafe {
            Pipe {
                r: OwnedFd::from_raw_fd(fds[0]),
                w: OwnedFd::from_raw_fd(fds[1]),
            }
        };
        // SAFETY: fcntl on our own descriptor.
        let got = unsafe { libc::fcntl(pipe.w.as_raw_fd(), libc::F_SETPIPE_SZ, bytes as libc::c_int) };
        if got < bytes as libc::c_int {
            return None;
        }
        Some(pipe)
    }
}

pub fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK;
    // SAFETY: plain syscall on descriptors we hold; no offsets.
    check_size(unsafe { libc::splice(from, std::ptr::null_mut(), to, std::ptr::null_mut(), len, flags) })
}

pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is writable for its length.
    check_size(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })
}

pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is readable for its length.
    check_size(unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) })
}

pub fn shutdown_write(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall.
    check(unsafe { libc::shutdown(fd, libc::SHUT_WR) }).map(|_| ())
}

pub fn set_int_opt(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) {
    // SAFETY: an int option.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

pub fn socket_error(fd: RawFd) -> io::Result<()> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: an int option read into `value`.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    if value == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(value))
    }
}

/// Close with a reset (SO_LINGER 0), as asyncio's `transport.abort()`.
pub fn abort(fd: OwnedFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a linger option on our descriptor, then it closes with `fd`.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    drop(fd);
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

fn family(addr: &SocketAddr) -> libc::c_int {
    if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    }
}

fn stream_socket(addr: &SocketAddr) -> io::Result<OwnedFd> {
    let kind = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: plain syscall.
    owned(unsafe { libc::socket(family(addr), kind, 0) })
}

/// A non-blocking listening socket (SO_REUSEADDR, the given backlog).
pub fn listen(addr: &SocketAddr, backlog: i32) -> io::Result<OwnedFd> {
    let fd = stream_socket(addr)?;
    set_int_opt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
    let (storage, len) = sockaddr(addr);
    // SAFETY: a valid address of `len` bytes.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
        )
    })?;
    // SAFETY: plain syscall.
    check(unsafe { libc::listen(fd.as_raw_fd(), backlog) })?;
    Ok(fd)
}

pub fn local_port(fd: RawFd) -> io::Result<u16> {
    // SAFETY: zeroed storage to be filled.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: a writable address buffer of `len` bytes.
    check(unsafe { libc::getsockname(fd, (&mut storage as *mut libc::sockaddr_storage).cast(), &mut len) })?;
    let port = if i32::from(storage.ss_family) == libc::AF_INET {
        // SAFETY: the kernel wrote a sockaddr_in.
        let sin: libc::sockaddr_in =
            unsafe { std::ptr::read((&storage as *const libc::sockaddr_storage).cast()) };
        sin.sin_port
    } else {
        // SAFETY: the kernel wrote a sockaddr_in6.
        let sin6: libc::sockaddr_in6 =
            unsafe { std::ptr::read((&storage as *const libc::sockaddr_storage).cast()) };
        sin6.sin6_port
    };
    Ok(u16::from_be(port))
}

/// A non-blocking accepted connection (None: nothing to accept now).
pub fn accept(listener: RawFd) -> io::Result<Option<OwnedFd>> {
    let flags = libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: no peer address wanted.
    let fd = unsafe { libc::accept4(listener, std::ptr::null_mut(), std::ptr::null_mut(), flags) };
    match owned(fd) {
        Ok(fd) => Ok(Some(fd)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// Start a non-blocking connect (done when the socket is writable: `socket_error` says how).
pub fn connect_start(addr: &SocketAddr) -> io::Result<OwnedFd> {
    let fd = stream_socket(addr)?;
    let (storage, len) = sockaddr(addr);
    // SAFETY: a valid address of `len` bytes.
    let ret = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
        )
    };
    if ret < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(err);
        }
    }
    Ok(fd)
}

/// Asyncio's defaults on every TCP socket it relays: no Nagle delay.
pub fn tune_tcp(fd: RawFd) {
    set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
}

/// Block SIGTERM and SIGINT in this thread (and the threads it starts) and read them from a
/// signalfd instead.
pub fn signal_fd() -> io::Result<OwnedFd> {
    // SAFETY: a sigset filled by the libc helpers, then handed to the kernel.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        owned(libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC))
    }
}

pub fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we hold.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}
