import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension TestSupport {
    /// A free TCP port on 127.0.0.1 (bind to 0, read it back, close).
    public static func freePort() throws -> Int {
        let (fd, port) = try boundSocket(listening: false)
        close(fd)
        return port
    }

    /// A port on 127.0.0.1 held bound and not listening until ``HeldPort/release()``: meanwhile a connection
    /// to it is refused, and no bind to port 0, in this process or another, can get it, which a port from
    /// ``freePort()`` cannot promise. For a port that must stay refused, and for one written into the
    /// configuration of a peer that picks its own ports as it starts (orthanc-start.sh picks two, px-serve
    /// listens on port 0): once Orthanc took the very port px-sync's receiver was then to listen on. Release
    /// the port before anything listens on it.
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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    struct SocketFailed: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func boundSocket(listening: Bool) throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketFailed(call: "socket", code: errno) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw SocketFailed(call: "bind", code: errno)
        }
        if listening { listen(fd, 8) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
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
