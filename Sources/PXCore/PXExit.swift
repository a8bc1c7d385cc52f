/// px's exit statuses, shared by every command.
public enum PXExit {
    public static let success: Int32 = 0
    /// A DICOM failure: refused, rejected, a failure status, an abort.
    public static let dicomFailure: Int32 = 1
    /// EX_USAGE.
    public static let usage: Int32 = 64
    /// EX_UNAVAILABLE: a DCMTK tool is missing or the backend is unavailable.
    public static let unavailable: Int32 = 69
    /// EX_TEMPFAIL: a timeout.
    public static let timeout: Int32 = 75

    /// The status for an error.
    public static func code(for error: PXError) -> Int32 {
        switch error.code {
        case .usage, .tls(.configuration): return usage
        case .toolMissing, .backendUnavailable, .tls(.unsupported): return unavailable
        case .timeout, .placeBusy: return timeout
        case .interrupted: return 128 + (error.signal ?? 2)
        default: return dicomFailure
        }
    }

    /// The table every `--help` shows.
    public static let helpTable = """
        Exit status:
          0   success
          1   DICOM failure (connection refused, association rejected or aborted,
              failure status)
          64  usage error
          69  DCMTK tool missing or backend unavailable
          75  timeout (a peer, or another px holding the place's lock)
          130 interrupted by SIGINT, 143 by SIGTERM (px-move, px-get: after C-CANCEL)
        """
}
