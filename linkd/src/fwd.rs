//! The packet link's forwarder (`kit-linkfwd`): the same process, job and rules as
//! `kit/delayline/forwarder.py`. It makes the client's and the server's namespaces with a TUN
//! device each (`netns`), then one thread moves IP packets between the two devices, each
//! delivered when its direction's schedule (`packets`) says.
//!
//! One epoll over both devices, the signalfd and an absolute `timerfd` deadline (ns, 1 ns
//! timer slack): every wake-up reads what is waiting (at most `READS_PER_WAKE` a device, so
//! one direction cannot starve the other), then writes everything due. Packets wait in
//! buffers reused from a bounded pool. With offload (`gso`) a read may be a TCP super-packet:
//! its segments are offered one by one, and it is written whole when all are due at once.
//! While the forwarder is light (`priority`: little CPU and few bytes) it runs at SCHED_FIFO
//! where allowed and spins the last `SPIN_NS` before a due time; under bulk traffic it stays
//! in the normal class and sleeps on the timer.

use crate::gso::{self, Super, VNET_HDR_BYTES};
use crate::job::pb::{ForwarderJob, LinkJob};
use crate::netns::{self, SetupError, Side, CLIENT_ADDR, CLIENT_NS_FD, SERVER_ADDR, SERVER_NS_FD};
use crate::packets::{DirectionCounts, DirectionSpec, PacketDirection};
use crate::packettap::PacketTap;
use crate::priority::{Priority, SPIN_NS};
use crate::schedule::{Bottleneck, RateSteps};
use crate::sys::{self, Epoll, Timer};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::rc::Rc;

pub const STACK: &str = "kit-linkfwd";
const READS_PER_WAKE: usize = 256;
const MAX_LATE_SAMPLES: usize = 200_000;
const MAX_PACKET_BYTES: usize = 65_536;
/// A read: a super-packet of up to 64 KiB behind its `virtio_net_hdr`.
const READ_BYTES: usize = 2 * MAX_PACKET_BYTES;
const OFFLOAD_ENV: &str = "KIT_LINKFWD_OFFLOAD";
const MAX_POOLED_BUFFERS: usize = 1024;
const IDLE_WAIT_MS: i32 = 200;
const TOKEN_SIGNAL: u64 = 2;
const TOKEN_TIMER: u64 = 3;

/// Why the forwarder stopped before its ready line: exit 2 (a bad job) or 3 (the system).
pub enum Refused {
    BadJob(String),
    CannotStart(String),
}

impl From<SetupError> for Refused {
    fn from(e: SetupError) -> Self {
        match e {
            SetupError::Usage(m) => Refused::BadJob(m),
            SetupError::System(m) => Refused::CannotStart(m),
        }
    }
}

/// A packet waiting for its due time: as read, or one segment of a super-packet read whole
/// (its consecutive segments due together are written as one).
enum Waiting {
    /// As read: one packet, or a super-packet of this many, all due at once.
    Read(Vec<u8>, usize),
    Segment(Rc<Vec<u8>>, Super, usize),
}

/// One direction: read from `src`, schedule, write to `dst` when due.
struct Lane {
    src: RawFd,
    dst: RawFd,
    schedule: PacketDirection,
    waiting: VecDeque<(i64, Waiting)>,
    late_ns: Vec<i64>,
}

/// Both lanes, the buffers they share and the tap.
struct Forwarder {
    lanes: [Lane; 2],
    pool: Vec<Vec<u8>>,
    scratch: Vec<u8>,
    /// Segments written together are built here.
    out: Vec<u8>,
    /// The `virtio_net_hdr` before each packet: `VNET_HDR_BYTES` with offload, else 0.
    vnet: usize,
    dues: Vec<Option<i64>>,
    tap: Option<PacketTap>,
    wakeups: u64,
    busy_ns: i64,
    moved_bytes: usize,
}

fn bottleneck(rate: Option<f64>, what: &str) -> Result<Option<Bottleneck>, Refused> {
    match rate {
        None => Ok(None),
        Some(r) => Bottleneck::new(r)
            .map(Some)
            .ok_or_else(|| Refused::BadJob(format!("link: {what} {r} must be above 0"))),
    }
}

fn down_bottleneck(link: &LinkJob) -> Result<Option<Bottleneck>, Refused> {
    if link.rate_steps.is_empty() {
        return bottleneck(link.rate_down_bits_s, "rate_down_bits_s");
    }
    let steps: Vec<(f64, i64)> = link
        .rate_steps
        .iter()
        .map(|s| (s.rate_bits_s, s.duration_ns))
        .collect();
    let bad = || Refused::BadJob("link: rate_steps: not a rate over time".into());
    let steps = RateSteps::new(&steps).ok_or_else(bad)?;
    Bottleneck::with_steps(steps).map(Some).ok_or_else(bad)
}

/// The (up, down) schedules of the job's link, each seeded apart (seed x 2 + direction).
fn directions(job: &ForwarderJob) -> Result<[PacketDirection; 2], Refused> {
    let link = job.link.clone().unwrap_or_default();
    let up_bottleneck = bottleneck(link.rate_up_bits_s, "rate_up_bits_s")?;
    let specs = [
        (link.delay_up_ns, up_bottleneck, job.queue_up_bytes),
        (link.delay_down_ns, down_bottleneck(&link)?, job.queue_down_bytes),
    ];
    let mut out = Vec::with_capacity(2);
    for (index, (delay_ns, bottleneck, queue)) in specs.into_iter().enumerate() {
        let spec = DirectionSpec {
            delay_ns,
            bottleneck,
            queue_bytes: i64::try_from(queue).unwrap_or(i64::MAX),
            jitter_ns: link.jitter_ns,
            loss: job.loss,
            burst_len: job.loss_burst_len,
            seed: u128::from(link.seed) * 2 + index as u128,
        };
        out.push(PacketDirection::new(spec).map_err(Refused::BadJob)?);
    }
    let down = out.pop().unwrap_or_else(|| unreachable!());
    let up = out.pop().unwrap_or_else(|| unreachable!());
    Ok([up, down])
}

impl Forwarder {
    /// Read what waits on lane `index`'s device (bounded), each packet stamped as it is
    /// read (a backlog read in one wake-up keeps the spacing of its reads).
    fn read_some(&mut self, index: usize) {
        for _ in 0..READS_PER_WAKE {
            let n = match sys::read(self.lanes[index].src, &mut self.scratch) {
                Ok(n) if n > 0 => n,
                _ => return, // drained (EAGAIN), or the device is going away
            };
            if n <= self.vnet {
                continue;
            }
            self.moved_bytes += n;
            let now = sys::monotonic_ns();
            let whole = self.vnet == 0;
            match (!whole).then(|| gso::super_packet(&self.scratch[..n])).flatten() {
                Some(s) => self.offer_super(index, n, &s, now),
                None => self.offer_one(index, n, now),
            }
        }
    }

    fn buffer(&mut self) -> Vec<u8> {
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf
    }

    /// One packet (behind its `virtio_net_hdr`, if any): offered, kept as read if delivered.
    fn offer_one(&mut self, index: usize, n: usize, now_ns: i64) {
        if let Some(due) = self.lanes[index].schedule.offer(n - self.vnet, now_ns) {
            let mut buf = self.buffer();
            buf.extend_from_slice(&self.scratch[..n]);
            self.lanes[index].waiting.push_back((due, Waiting::Read(buf, 1)));
        }
    }

    /// A super-packet: each segment offered in order; kept whole when every segment is
    /// delivered at one due time, else each delivered segment waits on its own.
    fn offer_super(&mut self, index: usize, n: usize, s: &Super, now_ns: i64) {
        let mut dues = std::mem::take(&mut self.dues);
        dues.clear();
        let schedule = &mut self.lanes[index].schedule;
        dues.extend((0..s.count).map(|i| schedule.offer(s.segment_bytes(i), now_ns)));
        let first = dues[0];
        if first.is_some() && dues.iter().all(|d| *d == first) {
            let mut buf = self.buffer();
            buf.extend_from_slice(&self.scratch[..n]);
            let due = first.unwrap_or_default();
            let entry = Waiting::Read(buf, s.count);
            self.lanes[index].waiting.push_back((due, entry));
        } else if dues.iter().any(Option::is_some) {
            let frame = Rc::new(self.scratch[..n].to_vec());
            for (i, due) in dues.iter().enumerate() {
                if let Some(due) = *due {
                    let entry = Waiting::Segment(Rc::clone(&frame), *s, i);
                    self.lanes[index].waiting.push_back((due, entry));
                }
            }
        }
        self.dues = dues;
    }

    /// Write every packet of lane `index` due by `now_ns`; a failed write is a drop (the
    /// device is going away, or its queue is full).
    fn write_due(&mut self, index: usize, now_ns: i64) {
        while let Some((due, entry)) = self.pop_due(index, now_ns) {
            let packets = match &entry {
                Waiting::Read(_, packets) => *packets,
                Waiting::Segment(..) => 1,
            };
            self.late(index, now_ns - due, packets);
            let buf = match entry {
                Waiting::Read(buf, _) => buf,
                Waiting::Segment(frame, s, first) => {
                    let last = self.run_end(index, now_ns, &frame, first);
                    let mut out = std::mem::take(&mut self.out);
                    out.clear();
                    gso::segments(&frame, &s, first, last, &mut out);
                    out
                }
            };
            let dst = self.lanes[index].dst;
            // SAFETY: a buffer we own, to a descriptor we hold.
            let wrote = unsafe { libc::write(dst, buf.as_ptr().cast(), buf.len()) };
            if wrote >= 0 {
                self.tap_packet(index, &buf[self.vnet..], now_ns);
            }
            self.recycle(buf);
        }
    }

    fn pop_due(&mut self, index: usize, now_ns: i64) -> Option<(i64, Waiting)> {
        let waiting = &mut self.lanes[index].waiting;
        if waiting.front().is_some_and(|(due, _)| *due <= now_ns) {
            waiting.pop_front()
        } else {
            None
        }
    }

    /// The last of the consecutive segments of `frame` from `first` on that are due by
    /// `now_ns` (taken off the queue: they are written with `first`).
    fn run_end(&mut self, index: usize, now_ns: i64, frame: &Rc<Vec<u8>>, first: usize) -> usize {
        let mut last = first;
        while let Some((due, Waiting::Segment(next, _, i))) = self.lanes[index].waiting.front() {
            if *due > now_ns || !Rc::ptr_eq(next, frame) || *i != last + 1 {
                break;
            }
            let late = now_ns - *due;
            last = *i;
            self.lanes[index].waiting.pop_front();
            self.late(index, late, 1);
        }
        last
    }

    /// `packets` written `late_ns` after their due time, kept in the sample (bounded).
    fn late(&mut self, index: usize, late_ns: i64, packets: usize) {
        let late = &mut self.lanes[index].late_ns;
        let room = MAX_LATE_SAMPLES.saturating_sub(late.len());
        late.extend(std::iter::repeat_n(late_ns, packets.min(room)));
    }

    /// Keep a written buffer for the next packet (the built one as the build buffer).
    fn recycle(&mut self, buf: Vec<u8>) {
        if self.out.capacity() == 0 {
            self.out = buf;
        } else if self.pool.len() < MAX_POOLED_BUFFERS {
            self.pool.push(buf);
        }
    }

    /// Hand a delivered packet to the tap, with the queue peaks it marks and reads.
    fn tap_packet(&mut self, index: usize, packet: &[u8], now_ns: i64) {
        let mut peaks = self.peaks();
        let Some(tap) = self.tap.as_mut() else {
            return;
        };
        tap.packet(index as u8, packet, now_ns, &mut peaks);
        for (lane, peak) in self.lanes.iter_mut().zip(peaks) {
            lane.schedule.counts.peak_since_mark_bytes = peak;
        }
    }

    fn peaks(&self) -> [i64; 2] {
        [0, 1].map(|i| self.lanes[i].schedule.counts.peak_since_mark_bytes)
    }

    fn next_due_ns(&self) -> Option<i64> {
        self.lanes
            .iter()
            .filter_map(|l| l.waiting.front().map(|(d, _)| *d))
            .min()
    }
}

/// How long the next wait may block: 0 to spin (light and a due time close), else until
/// the timer or `IDLE_WAIT_MS`. A light forwarder's timer fires `SPIN_NS` before the next
/// due time; the loop then polls until it.
fn wait_ms(fwd: &Forwarder, timer: &mut Timer, priority: &Priority, now_ns: i64) -> i32 {
    let spin = if priority.light() { SPIN_NS } else { 0 };
    match fwd.next_due_ns() {
        Some(due) if due - now_ns <= spin => 0,
        Some(due) => {
            timer.set((due - spin).max(1));
            IDLE_WAIT_MS
        }
        None => IDLE_WAIT_MS,
    }
}

/// Forward until SIGTERM/SIGINT arrives on `signals`.
fn forward(fwd: &mut Forwarder, signals: &OwnedFd) -> io::Result<()> {
    let epoll = Epoll::new()?;
    let mut timer = Timer::new()?;
    epoll.add(fwd.lanes[0].src, libc::EPOLLIN as u32, 0)?;
    epoll.add(fwd.lanes[1].src, libc::EPOLLIN as u32, 1)?;
    epoll.add(signals.as_raw_fd(), libc::EPOLLIN as u32, TOKEN_SIGNAL)?;
    epoll.add(timer.fd(), libc::EPOLLIN as u32, TOKEN_TIMER)?;
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
    let mut priority = Priority::start(sys::monotonic_ns());
    loop {
        let now = sys::monotonic_ns();
        let timeout = wait_ms(fwd, &mut timer, &priority, now);
        let n = epoll.wait(&mut events, timeout)?;
        let start = sys::monotonic_ns();
        for event in &events[..n] {
            match event.u64 {
                TOKEN_SIGNAL => return Ok(()),
                TOKEN_TIMER => timer.drain(),
                lane => fwd.read_some(lane as usize),
            }
        }
        for index in 0..2 {
            fwd.write_due(index, sys::monotonic_ns());
        }
        let end = sys::monotonic_ns();
        fwd.wakeups += 1;
        fwd.busy_ns += end - start;
        priority.moved(std::mem::take(&mut fwd.moved_bytes));
        priority.update(end);
    }
}

/// numpy's default percentile (linear between closest ranks), as `kit.quantile`.
fn percentile(sorted: &[i64], pct: f64) -> f64 {
    let rank = (sorted.len() - 1) as f64 * pct / 100.0;
    let lower = rank.floor() as usize;
    let upper = (lower + 1).min(sorted.len() - 1);
    let (a, b) = (sorted[lower] as f64, sorted[upper] as f64);
    a + (b - a) * (rank - lower as f64)
}

/// Python's `round(x, digits)` for the totals (half to even at the last digit).
fn round_to(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round_ties_even() / scale
}

fn side_json(c: &DirectionCounts) -> Value {
    json!({
        "packets": c.packets, "bytes": c.bytes, "delivered_packets": c.delivered_packets,
        "delivered_bytes": c.delivered_bytes, "lost_packets": c.lost_packets,
        "queue_drops": c.queue_drops, "peak_queued_bytes": c.peak_queued_bytes,
    })
}

/// The `PacketTotals` result line's data.
fn totals(fwd: &Forwarder, device_drops: u64) -> Value {
    let mut late: Vec<i64> = fwd.lanes.iter().flat_map(|l| l.late_ns.iter().copied()).collect();
    if late.is_empty() {
        late.push(0);
    }
    late.sort_unstable();
    json!({
        "up": side_json(&fwd.lanes[0].schedule.counts),
        "down": side_json(&fwd.lanes[1].schedule.counts),
        "wakeups": fwd.wakeups,
        "busy_s": round_to(fwd.busy_ns as f64 / 1e9, 3),
        "late_p50_us": round_to(percentile(&late, 50.0) / 1e3, 1),
        "late_p99_us": round_to(percentile(&late, 99.0) / 1e3, 1),
        "late_samples": late.len(),
        "device_drops": device_drops,
    })
}

/// The namespaces and devices (entering a user namespace first when not root).
fn make_sides(job: &ForwarderJob, offload: bool) -> Result<(Side, Side), Refused> {
    if netns::in_user_namespace() {
        netns::enter_user_namespace()?;
    }
    let mtu = job.mtu;
    let client = netns::new_side(
        &format!("{CLIENT_ADDR}/32"),
        SERVER_ADDR,
        mtu,
        CLIENT_NS_FD,
        &job.congestion,
        offload,
    )?;
    let server = netns::new_side(
        &format!("{SERVER_ADDR}/32"),
        CLIENT_ADDR,
        mtu,
        SERVER_NS_FD,
        &job.congestion,
        offload,
    )?;
    Ok((client, server))
}

/// Run the job: make the namespaces, say ready, forward until a signal, then the totals
/// (the tap's last lines written first). Everything it made goes with its descriptors.
pub fn serve(job: ForwarderJob, signals: OwnedFd, ready: impl FnOnce()) -> Result<Value, Refused> {
    let [up, down] = directions(&job)?;
    if job.mtu == 0 || job.mtu as usize > MAX_PACKET_BYTES {
        return Err(Refused::BadJob(format!("mtu: {} is not an MTU", job.mtu)));
    }
    let offload = std::env::var(OFFLOAD_ENV).map_or(true, |v| v != "off");
    let (client, server) = make_sides(&job, offload)?;
    let tap = if job.tap_path.is_empty() {
        None
    } else {
        Some(PacketTap::open(&job.tap_path, &job.tap_decoder).map_err(Refused::CannotStart)?)
    };
    let lane = |src: &Side, dst: &Side, schedule| Lane {
        src: src.tun.as_raw_fd(),
        dst: dst.tun.as_raw_fd(),
        schedule,
        waiting: VecDeque::new(),
        late_ns: Vec::new(),
    };
    let mut fwd = Forwarder {
        lanes: [lane(&client, &server, up), lane(&server, &client, down)],
        pool: Vec::new(),
        scratch: vec![0; READ_BYTES],
        out: Vec::new(),
        vnet: if offload { VNET_HDR_BYTES } else { 0 },
        dues: Vec::new(),
        tap,
        wakeups: 0,
        busy_ns: 0,
        moved_bytes: 0,
    };
    ready();
    if let Err(e) = forward(&mut fwd, &signals) {
        eprintln!("{STACK}: forwarding stopped: {}", sys::strerror(&e));
    }
    let drops = netns::device_drops(client.ns.as_raw_fd()) + netns::device_drops(server.ns.as_raw_fd());
    let result = totals(&fwd, drops);
    drop((client, server));
    if let Some(tap) = fwd.tap.take() {
        if let Some(problem) = tap.close(result.clone(), sys::monotonic_ns(), &fwd.peaks()) {
            eprintln!("{STACK}: {problem}");
        }
    }
    Ok(result)
}
