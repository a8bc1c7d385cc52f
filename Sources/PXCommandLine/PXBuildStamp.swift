/// The commit px was built from, as `--version` reports it, when nothing better is known: a plain `swift build`
/// says `dev`. `make build`, `make release` and `make install` write `Sources/PXTools/PXBuildStamp.generated.swift`
/// (not committed), whose `PXBuildStamp` shadows this one inside PXTools with `git describe`'s answer.
public enum PXBuildStamp {
    public static let commit = "dev"
}
