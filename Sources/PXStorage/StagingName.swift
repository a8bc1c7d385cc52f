#if canImport(Glibc)
    import Glibc
#endif

/// Names of temporary files in a staging folder (`.px-incoming`): `PREFIX-PID-N.part`, unique across the
/// processes writing into one place (the pid) and across the tasks of one process (a process-wide counter).
/// A name per call site and loop index was not enough: px-sync copies several studies into one folder at
/// once, and two lanes picked the same `copy-PID-0.part`.
public enum StagingName {
    static let counter = ZipCounter()

    /// A new name, e.g. `copy-4242-17.part`.
    public static func next(_ prefix: String) -> String {
        "\(prefix)-\(getpid())-\(counter.next()).part"
    }
}
