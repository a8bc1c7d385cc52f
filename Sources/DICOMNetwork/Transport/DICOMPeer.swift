/// A remote application entity: host, port and AE title (PS3.8 §7.1.1.4).
public struct DICOMPeer: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address.
    public var host: String
    /// TCP port.
    public var port: Int
    /// The peer's AE title (the called AE title of our A-ASSOCIATE-RQ).
    public var aeTitle: String

    public init(host: String, port: Int, aeTitle: String) {
        self.host = host
        self.port = port
        self.aeTitle = aeTitle
    }

    public var description: String { "\(self.aeTitle)@\(self.host):\(self.port)" }
}
