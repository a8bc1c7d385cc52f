import DICOMData
import NIOPosix
import Synchronization

/// The memory a server lets all its associations together spend on decoding received data sets (the
/// header reads that sort them); each read also keeps within its own ``HeaderLimits`` (per association:
/// an association decodes one instance at a time).
///
/// A read that would take more than what is left is refused (the C-STORE is answered 0xA700, Refused: Out
/// of Resources, PS3.4 §B.2.3), so that many hostile instances at once cannot together exhaust memory.
public final class DecodingBudget: Sendable, Hashable {
    /// The total, in bytes.
    public let limit: Int
    private let used = Mutex(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes currently reserved by reads in progress.
    public var inUse: Int { self.used.withLock { $0 } }

    /// Takes `bytes` more; throws ``DICOMDataError/Code/tooLarge`` when they are not left.
    func take(_ bytes: Int) throws(DICOMDataError) {
        let granted = self.used.withLock { used in
            guard used + bytes <= self.limit else { return false }
            used += bytes
            return true
        }
        if !granted { throw .tooLarge("the decoding memory of all associations", limit: self.limit) }
    }

    func give(_ bytes: Int) {
        self.used.withLock { $0 -= bytes }
    }

    public static func == (lhs: DecodingBudget, rhs: DecodingBudget) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension IncomingInstance {
    /// Reads the received file's header (everything before Pixel Data), within the receiving server's
    /// ``HeaderLimits`` and ``DecodingBudget``, on NIO's blocking-I/O thread pool: inflating and parsing
    /// never hold up the event loops or the tasks of other associations.
    ///
    /// - Throws: ``DICOMDataError``, with ``DICOMDataError/Code/tooLarge`` past a limit or the budget.
    public func readHeader() async throws -> Part10File {
        let path = self.path
        let prefix = self.filePrefix
        let length = self.fileLength
        let limits = self.headerLimits
        let budget = self.decodingBudget
        return try await NIOThreadPool.singleton.runIfActive {
            let held = Mutex(0)
            defer { budget?.give(held.withLock { $0 }) }
            return try Part10File.readHeader(
                contentsOf: path, knownPrefix: prefix, fileLength: length, limits: limits,
                reserve: { (total: Int) throws(DICOMDataError) in
                    let more = total - held.withLock { $0 }
                    guard more > 0, let budget else { return }
                    try budget.take(more)
                    held.withLock { $0 = total }
                })
        }
    }
}
