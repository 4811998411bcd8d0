//! Segmentation offload on the TUN devices (`IFF_VNET_HDR` + `TUNSETOFFLOAD`): the senders'
//! kernels hand the forwarder TCP/IPv4 super-packets of up to 64 KiB (one read instead of
//! dozens), each behind a `virtio_net_hdr`. The link's rules stay per packet: a super-packet
//! is offered to the schedule as the MTU-sized segments it stands for, in order. When every
//! segment is delivered at the same due time it is written whole (the receiving kernel takes
//! it as one large segment); otherwise its delivered segments wait on their own due times
//! and, when written, the consecutive ones due by then go out together as one smaller
//! super-packet (or a plain packet), their headers rewritten here (IP length, id and header
//! checksum; TCP sequence and flags; the TCP checksum left to the kernel as a partial one).

/// `struct virtio_net_hdr` (no `num_buffers`): flags, gso type, header length, gso size,
/// checksum start and offset, in the machine's byte order (TUN's default).
pub const VNET_HDR_BYTES: usize = 10;
const F_NEEDS_CSUM: u8 = 1;
const GSO_TCPV4: u8 = 1;
const GSO_ECN: u8 = 0x80;
const TCP_CSUM_OFFSET: u16 = 16;
const FIN: u8 = 0x01;
const PSH: u8 = 0x08;
const CWR: u8 = 0x80;

/// A TCP/IPv4 super-packet: where its headers end and how it splits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Super {
    ihl: usize,
    headers: usize,
    mss: usize,
    payload: usize,
    pub count: usize,
}

impl Super {
    /// The IP size of segment `i` (headers and its share of the payload).
    pub fn segment_bytes(&self, i: usize) -> usize {
        self.headers + self.mss.min(self.payload - i * self.mss)
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// `frame` (a `virtio_net_hdr`, then an IP packet) as a super-packet to split; `None` for
/// a packet to forward as it is (no segmentation asked, or not TCP/IPv4 the way expected).
pub fn super_packet(frame: &[u8]) -> Option<Super> {
    if frame.len() < VNET_HDR_BYTES + 40 || (frame[1] & !GSO_ECN) != GSO_TCPV4 {
        return None;
    }
    let mss = usize::from(u16::from_ne_bytes([frame[4], frame[5]]));
    let ip = &frame[VNET_HDR_BYTES..];
    if ip[0] >> 4 != 4 || ip[9] != 6 || mss == 0 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0F) * 4;
    let headers = ihl + usize::from(ip.get(ihl + 12)? >> 4) * 4;
    if ihl < 20 || headers > ip.len() || headers < ihl + 20 {
        return None;
    }
    let payload = ip.len() - headers;
    let count = payload.div_ceil(mss);
    (count > 0).then_some(Super {
        ihl,
        headers,
        mss,
        payload,
        count,
    })
}

/// The one's complement sum of `data` (16-bit big-endian words), not yet folded.
fn sum16(data: &[u8], mut acc: u32) -> u32 {
    let mut pairs = data.chunks_exact(2);
    for pair in &mut pairs {
        acc += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
    }
    if let [last] = pairs.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    // Two folds bring any sum of fewer than 2^16 words into 16 bits.
    acc = (acc & 0xFFFF) + (acc >> 16);
    acc = (acc & 0xFFFF) + (acc >> 16);
    acc as u16
}

/// Segments `first..=last` of the super-packet `frame` as one packet, appended to `out`: a
/// `virtio_net_hdr` asking the kernel to finish its TCP checksum (and, for more than one
/// segment, to take it as a super-packet of them), then IP and TCP headers rewritten for
/// those segments and their payload.
pub fn segments(frame: &[u8], s: &Super, first: usize, last: usize, out: &mut Vec<u8>) {
    let ip = &frame[VNET_HDR_BYTES..];
    let start = s.headers + first * s.mss;
    let len = (s.mss * (last + 1)).min(s.payload) - first * s.mss;
    let base = out.len();
    let mut hdr = [0u8; VNET_HDR_BYTES];
    hdr[0] = F_NEEDS_CSUM;
    if last > first {
        hdr[1] = frame[1]; // TCPv4, and ECN if it was
        hdr[4..6].copy_from_slice(&(s.mss as u16).to_ne_bytes());
    }
    hdr[2..4].copy_from_slice(&(s.headers as u16).to_ne_bytes());
    hdr[6..8].copy_from_slice(&(s.ihl as u16).to_ne_bytes());
    hdr[8..10].copy_from_slice(&TCP_CSUM_OFFSET.to_ne_bytes());
    out.extend_from_slice(&hdr);
    out.extend_from_slice(&ip[..s.headers]);
    out.extend_from_slice(&ip[start..start + len]);
    let p = &mut out[base + VNET_HDR_BYTES..];
    let total = (s.headers + len) as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    let id = be16(ip, 4).wrapping_add(first as u16);
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[10..12].copy_from_slice(&[0, 0]);
    let ip_sum = !fold(sum16(&p[..s.ihl], 0));
    p[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    let tcp = s.ihl;
    let seq = u32::from_be_bytes([ip[tcp + 4], ip[tcp + 5], ip[tcp + 6], ip[tcp + 7]]);
    let seq = seq.wrapping_add((first * s.mss) as u32);
    p[tcp + 4..tcp + 8].copy_from_slice(&seq.to_be_bytes());
    if last + 1 < s.count {
        p[tcp + 13] &= !(FIN | PSH);
    }
    if first > 0 {
        p[tcp + 13] &= !CWR;
    }
    // A partial checksum holds the pseudo-header's sum (addresses, protocol, TCP length).
    let tcp_len = (total as usize - s.ihl) as u32;
    let pseudo = sum16(&p[12..20], 6 + tcp_len);
    p[tcp + 16..tcp + 18].copy_from_slice(&fold(pseudo).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A super-packet: `payload` bytes of TCP/IPv4 with an MSS of `mss`.
    fn frame(payload: usize, mss: u16, flags: u8) -> Vec<u8> {
        let mut f = vec![0u8; VNET_HDR_BYTES + 40 + payload];
        f[0] = F_NEEDS_CSUM;
        f[1] = GSO_TCPV4;
        f[4..6].copy_from_slice(&mss.to_ne_bytes());
        let ip = &mut f[VNET_HDR_BYTES..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((40 + payload) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&0xFFFFu16.to_be_bytes());
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[10, 203, 0, 2]);
        ip[16..20].copy_from_slice(&[10, 203, 0, 1]);
        ip[24..28].copy_from_slice(&u32::MAX.to_be_bytes());
        ip[32] = 5 << 4;
        ip[33] = flags;
        for (k, b) in ip[40..].iter_mut().enumerate() {
            *b = k as u8;
        }
        f
    }

    #[test]
    fn a_super_packet_splits_into_mss_segments_with_their_headers() {
        let f = frame(3000, 1448, 0x18 | FIN | CWR);
        let s = super_packet(&f).unwrap();
        assert_eq!((s.count, s.segment_bytes(0), s.segment_bytes(2)), (3, 1488, 144));
        let mut out = Vec::new();
        segments(&f, &s, 1, 1, &mut out);
        let p = &out[VNET_HDR_BYTES..];
        assert_eq!(p.len(), 1488);
        assert_eq!(be16(p, 2), 1488);
        assert_eq!(be16(p, 4), 0); // the id wraps
        assert_eq!(fold(sum16(&p[..20], 0)), 0xFFFF); // a valid header checksum
        assert_eq!(u32::from_be_bytes([p[24], p[25], p[26], p[27]]), 1447); // wraps too
        assert_eq!(p[33], 0x10); // neither FIN, PSH nor CWR in the middle
        assert_eq!(&p[40..42], &[(1448 % 256) as u8, (1449 % 256) as u8]);
        let mut last = Vec::new();
        segments(&f, &s, 2, 2, &mut last);
        assert_eq!(last[VNET_HDR_BYTES + 33], 0x18 | FIN);
        let mut run = Vec::new();
        segments(&f, &s, 1, 2, &mut run);
        assert_eq!((run[1], u16::from_ne_bytes([run[4], run[5]])), (GSO_TCPV4, 1448));
        assert_eq!(be16(&run[VNET_HDR_BYTES..], 2), 40 + 3000 - 1448);
        assert_eq!(run[VNET_HDR_BYTES + 33], 0x10 | 0x08 | FIN); // the last's FIN and PSH
    }

    #[test]
    fn plain_packets_and_strangers_are_not_split() {
        let mut f = frame(100, 1448, 0x10);
        f[1] = 0; // VIRTIO_NET_HDR_GSO_NONE
        assert_eq!(super_packet(&f), None);
        assert_eq!(super_packet(&[0u8; 20]), None);
    }
}
