import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension TestSupport {
    /// A free TCP port on 127.0.0.1 from this process's ``TestPortBlock``: nothing listens on it and nothing is
    /// bound to it now, and no other process that follows the scheme will hand it out. For a peer that is to
    /// bind it later (a port from a bind to port 0 lies in the kernel's ephemeral range, where any outgoing
    /// connection can take it before the peer binds).
    public static func freePort() throws -> Int {
        try TestPortBlock.shared().freePort()
    }

    /// A port on 127.0.0.1 held bound and not listening until ``HeldPort/release()``: meanwhile a connection
    /// to it is refused and nothing else can bind it. For a port that must stay refused, and for one written
    /// into the configuration of a peer that is started later. Release the port before anything listens on
    /// it.
    public static func holdPort() throws -> HeldPort {
        let (fd, port) = try boundSocket(listening: false)
        return HeldPort(fd: fd, port: port)
    }

    /// A listening socket on 127.0.0.1 that never answers (for ACSE timeouts); the caller closes `fd`.
    public static func silentListener() throws -> (fd: Int32, port: Int) {
        try boundSocket(listening: true)
    }

    /// Waits until something accepts TCP connections on the port; throws after `seconds`.
    public static func waitForPort(_ port: Int, seconds: Double = 10) async throws {
        let open = await poll(seconds: seconds) { connects(to: port) }
        if !open { throw Failure("nothing listens on port \(port) after \(seconds) s") }
    }

    /// Whether a TCP connection to 127.0.0.1:`port` succeeds now.
    public static func connects(to port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = TestPortBlock.address(loopbackOnly: true, port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    /// A socket bound to 127.0.0.1 at the next port of this process's ``TestPortBlock`` that binds.
    private static func boundSocket(listening: Bool) throws -> (Int32, Int) {
        try TestPortBlock.shared().take { port in
            TestPortBlock.bindSocket(loopbackOnly: true, port: port, listening: listening).map { ($0, port) }
        }
    }
}

/// A block of TCP ports below the kernel's ephemeral range that one process owns while it runs, from which
/// the tests take the ports of their peers (``TestSupport/freePort()``, ``TestSupport/holdPort()``,
/// ``TestSupport/silentListener()``).
///
/// A port from a bind to port 0 lies in the ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`),
/// where the outgoing connection of any test running beside it can take it before the peer it was chosen for
/// binds it: Orthanc once failed to start with "Address already in use". Ports below that range are never
/// handed out by the kernel, and the block's lock keeps every other process that follows the scheme (a
/// second `swift test`, a script of scripts/lib.sh's `px_take_port_block`) out of them:
///
/// - the ports from 10000 to the ephemeral range's start (from 1024 when that start is lower) are cut into
///   blocks of ``blockSize``; block N starts at 10000 + N × ``blockSize``;
/// - a process owns block N while it holds an exclusive `flock` on `/tmp/px-test-ports/block-N.lock`
///   (`$PX_TEST_PORTS_DIR` overrides the folder), taken without waiting, the lowest free N first, and held
///   until the process ends;
/// - within its block a process hands out the ports in turn, wrapping round, each checked to bind first.
public final class TestPortBlock: Sendable {
    /// Ports per block (scripts/lib.sh uses the same number).
    public static let blockSize = 256

    /// Block number.
    public let number: Int
    /// The block's ports.
    public let ports: Range<Int>
    /// The lock file held.
    public let lockPath: String
    private let lockFD: Int32
    /// The index after the last port taken, and the ports reserved (``reserve()``), which ``take(_:)`` skips.
    private let next: Mutex<(index: Int, reserved: Set<Int>)>

    /// The kernel's ephemeral range (`ip_local_port_range`; Linux's default when unreadable).
    public static var ephemeralRange: ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard numbers.count == 2, numbers[0] <= numbers[1] else { return 32768...60999 }
        return numbers[0]...numbers[1]
    }

    /// The first port of block 0 and the number of blocks below the ephemeral range.
    public static var layout: (base: Int, count: Int) {
        let end = ephemeralRange.lowerBound
        let base = end - 10000 >= blockSize ? 10000 : 1024
        return (base, max(0, (end - base) / blockSize))
    }

    /// The folder of the lock files.
    public static var lockDirectory: String {
        ProcessInfo.processInfo.environment["PX_TEST_PORTS_DIR"] ?? "/tmp/px-test-ports"
    }

    /// Takes the lowest block no process holds, in `directory`; throws when every block is held.
    public init(directory: String = TestPortBlock.lockDirectory) throws {
        let (base, count) = Self.layout
        mkdir(directory, 0o777)
        chmod(directory, 0o1777)  // shared by every user's test runs; best effort
        for number in 0..<count {
            let path = "\(directory)/block-\(number).lock"
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
            if fd < 0 { continue }
            fchmod(fd, 0o666)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                self.number = number
                self.ports = (base + number * Self.blockSize)..<(base + (number + 1) * Self.blockSize)
                self.lockPath = path
                self.lockFD = fd
                self.next = Mutex((0, []))
                return
            }
            close(fd)
        }
        throw TestSupport.Failure("no free block of test ports in \(directory) (\(count) blocks, all locked)")
    }

    deinit { close(lockFD) }

    /// The block of this process, taken at the first call.
    public static func shared() throws -> TestPortBlock { try sharedBlock.get() }

    private static let sharedBlock = Result { try TestPortBlock() }

    /// Offers the block's ports to `use` in turn, from the one after the last taken, until it returns a value;
    /// throws when no port of the block suits.
    public func take<T>(_ use: (Int) -> T?) throws -> T {
        try next.withLock { next in
            for offset in 0..<ports.count {
                let index = (next.index + offset) % ports.count
                guard !next.reserved.contains(ports.lowerBound + index) else { continue }
                if let value = use(ports.lowerBound + index) {
                    next.index = (index + 1) % ports.count
                    return value
                }
            }
            throw TestSupport.Failure("no port of \(ports) binds")
        }
    }

    /// A free port (``freePort()``) that this process hands out to nothing else until ``unreserve(_:)``: for a
    /// listener that binds it and unbinds it again over a long time (a suite's listen port, written into its
    /// Orthanc's modalities). The round robin of ``take(_:)`` comes back to a port after 256 others, and a
    /// suite outlives that while others run beside it, so without the reservation another test could bind
    /// the port between two of the suite's listeners.
    public func reserve() throws -> Int {
        let port = try freePort()
        next.withLock { _ = $0.reserved.insert(port) }
        return port
    }

    /// Gives a reserved port back to the round robin.
    public func unreserve(_ port: Int) {
        next.withLock { _ = $0.reserved.remove(port) }
    }

    /// The next port of the block that binds on every address now (nothing bound to it, none in TIME_WAIT):
    /// checked on all addresses, not only 127.0.0.1, as Orthanc binds its DICOM port on all of them.
    public func freePort() throws -> Int {
        try take { port in
            guard let fd = Self.bindSocket(loopbackOnly: false, port: port, listening: false) else { return nil }
            close(fd)
            return port
        }
    }

    /// 127.0.0.1 or every address, at `port`.
    static func address(loopbackOnly: Bool, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = loopbackOnly ? inet_addr("127.0.0.1") : in_addr_t(0)
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// A socket bound to `port` without SO_REUSEADDR (so a port in TIME_WAIT counts as taken), close-on-exec
    /// (a child started meanwhile must not keep the port bound); nil when it does not bind.
    static func bindSocket(loopbackOnly: Bool, port: Int, listening: Bool) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = address(loopbackOnly: loopbackOnly, port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, !listening || listen(fd, 8) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}

/// A port from ``TestSupport/holdPort()``: bound until released (at the latest when the value goes away).
public final class HeldPort: Sendable {
    public let port: Int
    private let fd: Mutex<Int32?>

    init(fd: Int32, port: Int) {
        self.port = port
        self.fd = Mutex(fd)
    }

    /// Frees the port for the peer that is to listen on it; a second call does nothing.
    public func release() {
        fd.withLock { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    deinit { release() }
}
