import NIOCore

/// Collects PDVs into complete DIMSE commands and data sets (PS3.8 Annex E.2, PS3.7 §9.3.1).
///
/// Commands are always accumulated (bounded by ``maximumCommandLength``). Data sets are either accumulated
/// (bounded) or delivered fragment by fragment so that a receiver can stream them to disk.
///
/// Checks: a command must finish before its data set starts; a data set must follow a command on the same
/// presentation context; a message may not switch presentation context midway; a command may not start while
/// a data set is incomplete. Whether a command announces a data set (CommandDataSetType) is for the DIMSE
/// layer to check.
public struct PDataReassembler: Sendable {
    /// How data sets are delivered.
    public enum DatasetDelivery: Sendable, Hashable {
        /// Accumulate the whole data set, up to `maximumLength` bytes, and deliver it as ``Event/dataset(presentationContextID:_:)``.
        case accumulate(maximumLength: Int)
        /// Deliver each fragment as ``Event/datasetFragment(presentationContextID:_:isLast:)``.
        case stream
    }

    /// Something complete enough to hand upwards.
    public enum Event: Sendable, Hashable {
        /// A complete command set.
        case command(presentationContextID: UInt8, ByteBuffer)
        /// A complete data set (``DatasetDelivery/accumulate(maximumLength:)``).
        case dataset(presentationContextID: UInt8, ByteBuffer)
        /// One data set fragment (``DatasetDelivery/stream``); `isLast` marks the end of the data set.
        case datasetFragment(presentationContextID: UInt8, ByteBuffer, isLast: Bool)
    }

    private enum Phase: Sendable, Hashable {
        /// Between messages; `lastCommandContext` is the context of a command just completed, if any.
        case idle(lastCommandContext: UInt8?)
        case command(context: UInt8)
        case dataset(context: UInt8)
    }

    /// The default limit for a command set: 64 KiB, far above any real command.
    public static let defaultMaximumCommandLength = 64 * 1024

    /// The largest accepted command set.
    public let maximumCommandLength: Int
    /// How data sets are delivered.
    public let datasetDelivery: DatasetDelivery
    private var phase: Phase
    /// The fragments gathered so far; kept in a stored property so appends mutate a uniquely owned buffer.
    private var accumulated: ByteBuffer?

    /// Creates a reassembler.
    public init(
        maximumCommandLength: Int = PDataReassembler.defaultMaximumCommandLength, datasetDelivery: DatasetDelivery
    ) {
        self.maximumCommandLength = maximumCommandLength
        self.datasetDelivery = datasetDelivery
        self.phase = .idle(lastCommandContext: nil)
        self.accumulated = nil
    }

    /// Whether a message is partly received.
    public var isMidMessage: Bool {
        if case .idle = self.phase { return false }
        return true
    }

    /// Feeds one PDV; returns an event when a command or data set completes, or for each streamed fragment.
    ///
    /// - Throws: ``PDUError/unexpectedFragment(_:)`` for out-of-order PDVs, ``PDUError/messageTooLarge(_:size:maximum:)``
    ///   when a limit is exceeded. After an error the association should be aborted.
    public mutating func receive(_ pdv: PDV) throws -> Event? {
        let context = pdv.presentationContextID
        switch (self.phase, pdv.messageControlHeader.isCommand) {
        case (.idle, true):
            return try self.appendCommand(context: context, pdv)
        case (.command(let current), true):
            guard current == context else {
                throw PDUError.unexpectedFragment(
                    "command fragment on context \(context) while a command on context \(current) is incomplete"
                )
            }
            return try self.appendCommand(context: context, pdv)
        case (.dataset(let current), true):
            throw PDUError.unexpectedFragment(
                "command fragment on context \(context) while a data set on context \(current) is incomplete"
            )
        case (.command(let current), false):
            throw PDUError.unexpectedFragment(
                "data set fragment on context \(context) while a command on context \(current) is incomplete"
            )
        case (.idle(let lastCommand), false):
            guard let lastCommand else {
                throw PDUError.unexpectedFragment("data set fragment on context \(context) without a preceding command")
            }
            guard lastCommand == context else {
                throw PDUError.unexpectedFragment(
                    "data set fragment on context \(context) after a command on context \(lastCommand)"
                )
            }
            return try self.appendDataset(context: context, pdv)
        case (.dataset(let current), false):
            guard current == context else {
                throw PDUError.unexpectedFragment(
                    "data set fragment on context \(context) while a data set on context \(current) is incomplete"
                )
            }
            return try self.appendDataset(context: context, pdv)
        }
    }

    /// Appends a fragment to ``accumulated`` in place (the first fragment is kept as a zero-copy slice).
    private mutating func accumulate(_ fragment: ByteBuffer, what: String, maximum: Int) throws {
        let size = (self.accumulated?.readableBytes ?? 0) + fragment.readableBytes
        guard size <= maximum else {
            self.accumulated = nil
            throw PDUError.messageTooLarge(what, size: size, maximum: maximum)
        }
        if self.accumulated == nil {
            self.accumulated = fragment
        } else {
            self.accumulated?.writeImmutableBuffer(fragment)
        }
    }

    /// Hands out the accumulated message and forgets it.
    private mutating func takeAccumulated() -> ByteBuffer {
        let buffer = self.accumulated ?? ByteBuffer()
        self.accumulated = nil
        return buffer
    }

    private mutating func appendCommand(context: UInt8, _ pdv: PDV) throws -> Event? {
        try self.accumulate(pdv.data, what: "command set", maximum: self.maximumCommandLength)
        guard pdv.messageControlHeader.isLastFragment else {
            self.phase = .command(context: context)
            return nil
        }
        self.phase = .idle(lastCommandContext: context)
        return .command(presentationContextID: context, self.takeAccumulated())
    }

    private mutating func appendDataset(context: UInt8, _ pdv: PDV) throws -> Event? {
        let isLast = pdv.messageControlHeader.isLastFragment
        switch self.datasetDelivery {
        case .stream:
            self.phase = isLast ? .idle(lastCommandContext: nil) : .dataset(context: context)
            return .datasetFragment(presentationContextID: context, pdv.data, isLast: isLast)
        case .accumulate(let maximum):
            try self.accumulate(pdv.data, what: "data set", maximum: maximum)
            guard isLast else {
                self.phase = .dataset(context: context)
                return nil
            }
            self.phase = .idle(lastCommandContext: nil)
            return .dataset(presentationContextID: context, self.takeAccumulated())
        }
    }
}
