/// The sub-operation counters of a C-MOVE-RSP or C-GET-RSP (0000,1020)...(0000,1023) (PS3.7 §9.3.3.2, §9.3.4.2).
public struct SubOperationCounts: Sendable, Hashable {
    /// Number of Remaining Sub-operations (0000,1020); absent in final responses.
    public var remaining: UInt16?
    /// Number of Completed Sub-operations (0000,1021).
    public var completed: UInt16?
    /// Number of Failed Sub-operations (0000,1022).
    public var failed: UInt16?
    /// Number of Warning Sub-operations (0000,1023).
    public var warning: UInt16?

    public init(remaining: UInt16? = nil, completed: UInt16? = nil, failed: UInt16? = nil, warning: UInt16? = nil) {
        self.remaining = remaining
        self.completed = completed
        self.failed = failed
        self.warning = warning
    }

    init(commandSet: CommandSet) {
        typealias E = CommandSet.Element
        self.remaining = commandSet.uint16(E.numberOfRemainingSuboperations)
        self.completed = commandSet.uint16(E.numberOfCompletedSuboperations)
        self.failed = commandSet.uint16(E.numberOfFailedSuboperations)
        self.warning = commandSet.uint16(E.numberOfWarningSuboperations)
    }

    func write(into set: inout CommandSet) {
        typealias E = CommandSet.Element
        set.set(E.numberOfRemainingSuboperations, self.remaining)
        set.set(E.numberOfCompletedSuboperations, self.completed)
        set.set(E.numberOfFailedSuboperations, self.failed)
        set.set(E.numberOfWarningSuboperations, self.warning)
    }
}
