import NIOCore

/// Turns P-DATA PDVs into DIMSE messages, on top of ``PDataReassembler`` (PS3.7 §9.3, PS3.8 Annex E).
///
/// Data sets of the command fields in ``streamedCommands`` (typically C-STORE-RQ) are handed out fragment by
/// fragment so that a receiver can write them to disk as they arrive; all other data sets (identifiers,
/// which are small) are accumulated up to ``maximumDataSetLength``.
///
/// Checks on top of the reassembler's: a command that announces a data set (Command Data Set Type other
/// than 0x0101) must be followed by one before the next command, and a data set must not follow a
/// command that announced none.
public struct DIMSEMessageAssembler: Sendable {
    /// What the assembler produced.
    public enum Event: Sendable, Hashable {
        /// A complete message: with no data set, or with its accumulated data set.
        case message(DIMSEMessage, presentationContextID: UInt8, dataSet: ByteBuffer?)
        /// A command whose data set follows as ``datasetFragment(_:isLast:)`` events.
        case streamStarted(DIMSEMessage, presentationContextID: UInt8)
        /// One fragment of a streamed data set; `isLast` marks its end.
        case datasetFragment(ByteBuffer, isLast: Bool)
    }

    private enum Pending: Sendable, Hashable {
        case none
        case accumulating(DIMSEMessage, UInt8)
        case streaming
    }

    /// Commands whose data sets are streamed.
    public let streamedCommands: Set<DIMSECommandField>
    /// The largest accumulated data set.
    public let maximumDataSetLength: Int
    private var reassembler: PDataReassembler
    private var pending: Pending
    private var accumulated: ByteBuffer?

    /// The default limit for accumulated data sets (identifiers): 16 MiB.
    public static let defaultMaximumDataSetLength = 16 << 20

    /// Creates an assembler.
    public init(
        streamedCommands: Set<DIMSECommandField> = [.cStoreRQ],
        maximumDataSetLength: Int = DIMSEMessageAssembler.defaultMaximumDataSetLength,
        maximumCommandLength: Int = PDataReassembler.defaultMaximumCommandLength
    ) {
        self.streamedCommands = streamedCommands
        self.maximumDataSetLength = maximumDataSetLength
        self.reassembler = PDataReassembler(maximumCommandLength: maximumCommandLength, datasetDelivery: .stream)
        self.pending = .none
        self.accumulated = nil
    }

    /// Whether a message is partly received.
    public var isMidMessage: Bool {
        self.reassembler.isMidMessage || self.pending != .none
    }

    /// Feeds one PDV.
    ///
    /// - Throws: ``PDUError`` for out-of-order fragments or oversized messages, ``DIMSEError`` for bad commands.
    ///   Either way the association should be aborted.
    public mutating func receive(_ pdv: PDV) throws -> Event? {
        guard let event = try self.reassembler.receive(pdv) else { return nil }
        switch event {
        case .command(let context, let bytes):
            if case .none = self.pending {
            } else {
                throw DIMSEError.missingDataSet(for: "the previous command")
            }
            let message = try DIMSEMessage(commandSetBytes: bytes)
            guard message.hasDataSet else {
                return .message(message, presentationContextID: context, dataSet: nil)
            }
            if self.streamedCommands.contains(message.commandField) {
                self.pending = .streaming
                return .streamStarted(message, presentationContextID: context)
            }
            self.pending = .accumulating(message, context)
            return nil

        case .datasetFragment(_, let fragment, let isLast):
            switch self.pending {
            case .none:
                throw DIMSEError.unexpectedDataSet(after: "a command")
            case .streaming:
                if isLast { self.pending = .none }
                return .datasetFragment(fragment, isLast: isLast)
            case .accumulating(let message, let context):
                let size = (self.accumulated?.readableBytes ?? 0) + fragment.readableBytes
                guard size <= self.maximumDataSetLength else {
                    self.accumulated = nil
                    throw PDUError.messageTooLarge("data set", size: size, maximum: self.maximumDataSetLength)
                }
                if self.accumulated == nil {
                    self.accumulated = fragment
                } else {
                    self.accumulated?.writeImmutableBuffer(fragment)
                }
                guard isLast else { return nil }
                let dataSet = self.accumulated ?? ByteBuffer()
                self.accumulated = nil
                self.pending = .none
                return .message(message, presentationContextID: context, dataSet: dataSet)
            }

        case .dataset:
            // Not produced in .stream delivery.
            return nil
        }
    }
}
