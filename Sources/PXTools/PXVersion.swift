import PXCommandLine

/// What every command's `--version` prints: the package version and the commit it was built from
/// (`PXBuildStamp`: `dev` for a plain `swift build`, the commit for a build made by the Makefile).
public enum PXVersion {
    /// px's version: raised with each release.
    public static let version = "0.1.0"

    /// `0.1.0 (f8c6a7f)`, `0.1.0 (f8c6a7f-dirty)` or `0.1.0 (dev)`.
    public static let description = "\(version) (\(PXBuildStamp.commit))"
}
