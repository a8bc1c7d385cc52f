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

    private enum State: Sendable {
        /// Between messages; `lastCommandContext` is the context of a command just completed, if any.
        case idle(lastCommandContext: UInt8?)
        case command(context: UInt8, ByteBuffer)
        case dataset(context: UInt8, ByteBuffer?)
    }

    /// The default limit for a command set: 64 KiB, far above any real command.
    public static let defaultMaximumCommandLength = 64 * 1024

    /// The largest accepted command set.
    public let maximumCommandLength: Int
    /// How data sets are delivered.
    public let datasetDelivery: DatasetDelivery
    private var state: State

    /// Creates a reassembler.
    public init(maximumCommandLength: Int = PDataReassembler.defaultMaximumCommandLength, datasetDelivery: DatasetDelivery) {
        self.maximumCommandLength = maximumCommandLength
        self.datasetDelivery = datasetDelivery
        self.state = .idle(lastCommandContext: nil)
    }

    /// Whether a message is partly received.
    public var isMidMessage: Bool {
        if case .idle = self.state { return false }
        return true
    }

    /// Feeds one PDV; returns an event when a command or data set completes, or for each streamed fragment.
    ///
    /// - Throws: ``PDUError/unexpectedFragment(_:)`` for out-of-order PDVs, ``PDUError/messageTooLarge(_:size:maximum:)``
    ///   when a limit is exceeded. After an error the association should be aborted.
    public mutating func receive(_ pdv: PDV) throws -> Event? {
        let context = pdv.presentationContextID
        let header = pdv.messageControlHeader
        switch (self.state, header.isCommand) {
        case (.idle, true):
            return try self.appendCommand(context: context, accumulated: nil, pdv)
        case (.command(let current, let accumulated), true):
            guard current == context else {
                throw PDUError.unexpectedFragment("command fragment on context \(context) while a command on context \(current) is incomplete")
            }
            self.state = .idle(lastCommandContext: nil)  // release the buffer reference before appending
            return try self.appendCommand(context: context, accumulated: accumulated, pdv)
        case (.dataset(let current, _), true):
            throw PDUError.unexpectedFragment("command fragment on context \(context) while a data set on context \(current) is incomplete")
        case (.command(let current, _), false):
            throw PDUError.unexpectedFragment("data set fragment on context \(context) while a command on context \(current) is incomplete")
        case (.idle(let lastCommand), false):
            guard let lastCommand else {
                throw PDUError.unexpectedFragment("data set fragment on context \(context) without a preceding command")
            }
            guard lastCommand == context else {
                throw PDUError.unexpectedFragment("data set fragment on context \(context) after a command on context \(lastCommand)")
            }
            return try self.appendDataset(context: context, accumulated: nil, pdv)
        case (.dataset(let current, let accumulated), false):
            guard current == context else {
                throw PDUError.unexpectedFragment("data set fragment on context \(context) while a data set on context \(current) is incomplete")
            }
            self.state = .idle(lastCommandContext: nil)
            return try self.appendDataset(context: context, accumulated: accumulated, pdv)
        }
    }

    private mutating func appendCommand(context: UInt8, accumulated: ByteBuffer?, _ pdv: PDV) throws -> Event? {
        let size = (accumulated?.readableBytes ?? 0) + pdv.data.readableBytes
        guard size <= self.maximumCommandLength else {
            throw PDUError.messageTooLarge("command set", size: size, maximum: self.maximumCommandLength)
        }
        var buffer = pdv.data
        if var accumulated {
            accumulated.writeImmutableBuffer(pdv.data)
            buffer = accumulated
        }
        if pdv.messageControlHeader.isLastFragment {
            self.state = .idle(lastCommandContext: context)
            return .command(presentationContextID: context, buffer)
        }
        self.state = .command(context: context, buffer)
        return nil
    }

    private mutating func appendDataset(context: UInt8, accumulated: ByteBuffer?, _ pdv: PDV) throws -> Event? {
        let isLast = pdv.messageControlHeader.isLastFragment
        switch self.datasetDelivery {
        case .stream:
            self.state = isLast ? .idle(lastCommandContext: nil) : .dataset(context: context, nil)
            return .datasetFragment(presentationContextID: context, pdv.data, isLast: isLast)
        case .accumulate(let maximum):
            let size = (accumulated?.readableBytes ?? 0) + pdv.data.readableBytes
            guard size <= maximum else {
                throw PDUError.messageTooLarge("data set", size: size, maximum: maximum)
            }
            var buffer = pdv.data
            if var accumulated {
                accumulated.writeImmutableBuffer(pdv.data)
                buffer = accumulated
            }
            if isLast {
                self.state = .idle(lastCommandContext: nil)
                return .dataset(presentationContextID: context, buffer)
            }
            self.state = .dataset(context: context, buffer)
            return nil
        }
    }
}
