import DICOMData
import PXStorage

/// The users a server of px accepts (`--require-user FILE`, User Identity Negotiation, PS3.7 §D.3.3.7): an
/// association whose A-ASSOCIATE-RQ has no user identity sub-item (0x58), or one that is not a username and
/// passcode (type 2) matching a line of the file, is rejected.
///
/// The file has one account a line, `USER:sha256:SALT_HEX:HASH_HEX`, where `HASH` is SHA-256 (FIPS 180-4) of
/// the salt's bytes followed by the password's UTF-8 bytes; blank lines and lines starting with `#` are
/// ignored. `px-listen --hash-password USER` prints such a line (the password from `$PX_PASSWORD` or the
/// first line of standard input), and so does
/// `python3 -c 'import hashlib,os,sys; s=os.urandom(16); print(sys.argv[1]+":sha256:"+s.hex()+":"+hashlib.sha256(s+sys.argv[2].encode()).hexdigest())' USER PASSWORD`.
public struct UserAccounts: Hashable, Sendable {
    struct Account: Hashable, Sendable {
        var salt: [UInt8]
        var hash: [UInt8]
    }

    var accounts: [String: Account]

    /// The hash scheme of every line: `sha256`.
    public static let scheme = "sha256"

    /// Parses the file's text.
    /// - Throws: ``PXError/usage(_:)`` naming the first malformed line (never its hash).
    public init(parsing text: String, path: String) throws(PXError) {
        accounts = [:]
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) || line.hasPrefix("#") { continue }
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 4, !fields[0].isEmpty, fields[1] == Self.scheme,
                let salt = Self.bytes(hex: fields[2]), let hash = Self.bytes(hex: fields[3]), hash.count == 32
            else {
                throw .usage("\(path):\(number + 1): expected USER:sha256:SALT_HEX:HASH_HEX (64 hex digits of hash)")
            }
            accounts[String(fields[0])] = Account(salt: salt, hash: hash)
        }
        guard !accounts.isEmpty else { throw .usage("\(path) lists no user") }
    }

    /// Reads and parses a file.
    /// - Throws: ``PXError/usage(_:)`` for an unreadable or malformed file.
    public static func load(_ path: String) throws(PXError) -> UserAccounts {
        let bytes: [UInt8]
        do { bytes = try FileIO.readAll(path) } catch { throw .usage("cannot read the users file \(path): \(error)") }
        return try UserAccounts(parsing: String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// The users listed.
    public var usernames: Set<String> { Set(accounts.keys) }

    /// Whether `password` is `username`'s (the digests compared in constant time).
    public func verify(username: String, password: [UInt8]) -> Bool {
        guard let account = accounts[username] else { return false }
        let digest = SHA256.hash(account.salt + password)
        var difference: UInt8 = 0
        for (a, b) in zip(digest, account.hash) { difference |= a ^ b }
        return difference == 0
    }

    /// The file's line for an account: `USER:sha256:SALT_HEX:HASH_HEX`.
    /// - Throws: ``PXError/usage(_:)`` for a username that is empty or contains `:` or a line break.
    public static func line(username: String, password: String, salt: [UInt8]) throws(PXError) -> String {
        guard !username.isEmpty, !username.contains(where: { $0 == ":" || $0 == "\n" || $0 == "\r" }) else {
            throw .usage("a username must be non-empty, without ':' or line breaks")
        }
        let hash = SHA256.hash(salt + Array(password.utf8))
        return "\(username):\(scheme):\(hex(salt)):\(hex(hash))"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        let scalars = Array(hex.utf8)
        guard scalars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        for index in stride(from: 0, to: scalars.count, by: 2) {
            guard let high = value(scalars[index]), let low = value(scalars[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}
