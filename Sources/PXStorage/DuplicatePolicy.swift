/// What a receiver does with an instance that is already stored: a file at its final name whose SOP
/// Instance UID is the same (``InstancePlacer`` compares the UID in the file's header, not the name).
public enum DuplicatePolicy: String, Hashable, Sendable, CaseIterable {
    /// Keep the file already there and drop the new one (the default; the sender is still answered
    /// success: the instance is on disk).
    case keep
    /// Replace the file already there, atomically.
    case overwrite
    /// Store the new one next to it as `<name>-1.dcm`, `<name>-2.dcm`, ...
    case rename
}
