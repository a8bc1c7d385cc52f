// swift-tools-version: 6.2
import Foundation
import PackageDescription

// libFuzzer targets for px's decoders (issue 14), kept out of the main package so that its build and
// tests do not change. Build and run them with `make fuzz` / `make fuzz-smoke` at the top of the tree
// (scripts/fuzz.sh), which build with:
//     swift build --package-path Fuzz -c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address
// `--sanitize fuzzer` compiles every executable here as a library (-parse-as-library) and links
// libFuzzer's main, which calls each target's `LLVMFuzzerTestOneInput`; the -Xswiftc flag instruments
// every module (px's included) for coverage and AddressSanitizer.
//
// SwiftPM names a package after its directory: the directory px is cloned into must not be called
// `fuzz` (any case), or it and this package get the same name.

let settings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// SwiftPM names a path dependency after its directory, so the px package's name here is the name of
/// the directory this one sits in (a clone may be called anything).
let px = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent
    .lowercased()

let package = Package(
    name: "px-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The px package one level up.
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Invariant checks shared by the fuzzers: a failed check is a crash libFuzzer records.
        .target(name: "FuzzSupport", swiftSettings: settings),

        // PDU framing (streamed and whole), the seven PDU codecs and their items, P-DATA reassembly
        // and DIMSE command sets (PS3.8 §9.3, PS3.7 §E).
        .executableTarget(
            name: "fuzz-pdu",
            dependencies: [
                "FuzzSupport",
                .product(name: "DICOMProtocol", package: px),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: settings
        ),
        // The data set reader in every transfer syntax, Deflated included, and Part 10 files (PS3.5, PS3.10).
        .executableTarget(
            name: "fuzz-dataset",
            dependencies: ["FuzzSupport", .product(name: "DICOMData", package: px)],
            swiftSettings: settings
        ),
        // The JSON parser and the DICOM JSON model (PS3.18 §F).
        .executableTarget(
            name: "fuzz-json",
            dependencies: ["FuzzSupport", .product(name: "DICOMData", package: px)],
            swiftSettings: settings
        ),
        // The storage layout's sanitiser and paths.
        .executableTarget(
            name: "fuzz-layout",
            dependencies: [
                "FuzzSupport",
                .product(name: "PXStorage", package: px),
                .product(name: "DICOMData", package: px),
            ],
            swiftSettings: settings
        ),
        // The DICOMweb readers of what a server sends: the multipart parser of WADO-RS answers (RFC 2046
        // §5.1) and the streaming JSON array reader of QIDO-RS answers (PS3.18 §F.2).
        .executableTarget(
            name: "fuzz-web",
            dependencies: [
                "FuzzSupport",
                .product(name: "DICOMWeb", package: px),
                .product(name: "PXCore", package: px),
                .product(name: "DICOMData", package: px),
            ],
            swiftSettings: settings
        ),
        // The zip reader (hostile archives: names, overlaps, lying sizes, bombs) and a rewrite by the writer.
        .executableTarget(
            name: "fuzz-zip",
            dependencies: ["FuzzSupport", .product(name: "PXStorage", package: px)],
            swiftSettings: settings
        ),
    ]
)
