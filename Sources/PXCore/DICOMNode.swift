/// A remote DICOM application entity: where to connect and which AE title to call.
public struct DICOMNode: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The called AE title (PS3.8 §9.3.2, 1–16 characters).
    public var calledAETitle: String

    /// - Throws: ``PXError/usage(_:)`` for a bad port or AE title.
    public init(host: String, port: Int, calledAETitle: String) throws(PXError) {
        guard !host.isEmpty else { throw .usage("empty host") }
        guard (1...65535).contains(port) else { throw .usage("port \(port) out of range 1-65535") }
        try AETitle.validate(calledAETitle, role: "called AE title")
        self.host = host
        self.port = port
        self.calledAETitle = calledAETitle
    }

    public var description: String { "\(calledAETitle)@\(host):\(port)" }
}

/// Application entity title rules (PS3.5 §6.2, VR AE).
public enum AETitle {
    /// Checks an AE title: 1–16 characters of the default repertoire, no backslash or control
    /// characters, not only spaces.
    /// - Throws: ``PXError/usage(_:)`` naming the problem.
    public static func validate(_ title: String, role: String = "AE title") throws(PXError) {
        let scalars = title.unicodeScalars
        guard !scalars.isEmpty else { throw .usage("\(role) is empty") }
        guard scalars.count <= 16 else { throw .usage("\(role) '\(title)' is longer than 16 characters") }
        for s in scalars {
            if s == "\\" { throw .usage("\(role) '\(title)' contains a backslash") }
            if s.value < 0x20 || s.value >= 0x7F { throw .usage("\(role) contains a control or non-ASCII character") }
        }
        if scalars.allSatisfy({ $0 == " " }) { throw .usage("\(role) is only spaces") }
    }

    /// Whether ``validate(_:role:)`` accepts a title.
    public static func isValid(_ title: String) -> Bool {
        do {
            try validate(title)
            return true
        } catch {
            return false
        }
    }
}

/// The local application entity: the calling AE title px presents.
public struct LocalAE: Hashable, Sendable {
    /// The calling AE title.
    public var aeTitle: String

    public init(aeTitle: String = LocalAE.defaultTitle) throws(PXError) {
        try AETitle.validate(aeTitle, role: "calling AE title")
        self.aeTitle = aeTitle
    }

    /// `PXSCU`.
    public static let defaultTitle = "PXSCU"
}

/// Everything needed to open an association to a peer.
public struct Connection: Hashable, Sendable {
    public var node: DICOMNode
    public var local: LocalAE
    public var timeouts: Timeouts
    /// DICOM TLS (PS3.15 Annex B.9); `nil`: plain TCP.
    public var tls: TLSSettings? = nil
    /// The user identity to present (PS3.7 §D.3.3.7); `nil`: none.
    public var userIdentity: UserIdentity? = nil

    public init(node: DICOMNode, local: LocalAE, timeouts: Timeouts = .standard) {
        self.node = node
        self.local = local
        self.timeouts = timeouts
    }
}
