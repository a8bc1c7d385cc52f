import NIOCore

extension SocketAddress {
    /// `host` as an IPv4 or IPv6 address literal, or nil when it is a name to resolve.
    static func literal(_ host: String, port: Int) -> SocketAddress? {
        do {
            return try SocketAddress(ipAddress: host, port: port)
        } catch {
            // inet_pton refused it: not an address.
            return nil
        }
    }
}
