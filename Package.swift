// swift-tools-version: 6.3
import PackageDescription

/// Settings every px target shares: Swift 6 language mode and the upcoming features that keep
/// imports and existentials explicit.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Supported platform: Linux (Glibc). The file, socket and process code calls Glibc directly (fsync, pread,
// link, posix_spawn, malloc settings) and is built and tested on Linux only, so no Apple platform is
// declared.
let package = Package(
    name: "px",
    products: [
        .library(name: "DICOMData", targets: ["DICOMData"]),
        .library(name: "PX", targets: ["PX"]),
        .library(name: "PXCore", targets: ["PXCore"]),
        .library(name: "PXStorage", targets: ["PXStorage"]),
        .library(name: "DCMTKBackend", targets: ["DCMTKBackend"]),
        .library(name: "PXCommandLine", targets: ["PXCommandLine"]),
        .library(name: "PXCommands", targets: ["PXCommands"]),
        .library(name: "DICOMWeb", targets: ["DICOMWeb"]),
        .library(name: "DICOMProtocol", targets: ["DICOMProtocol"]),
        .library(name: "DICOMNetwork", targets: ["DICOMNetwork"]),
        // The multi-call binary `make install` installs; the px-* executables run the same commands.
        .executable(name: "px", targets: ["px"]),
        .executable(name: "px-dump", targets: ["px-dump"]),
        .executable(name: "px-echo", targets: ["px-echo"]),
        .executable(name: "px-find", targets: ["px-find"]),
        .executable(name: "px-move", targets: ["px-move"]),
        .executable(name: "px-listen", targets: ["px-listen"]),
        .executable(name: "px-push", targets: ["px-push"]),
        .executable(name: "px-get", targets: ["px-get"]),
        .executable(name: "px-sync", targets: ["px-sync"]),
        .library(name: "PXIndex", targets: ["PXIndex"]),
        .library(name: "PXPlaces", targets: ["PXPlaces"]),
        .executable(name: "px-serve", targets: ["px-serve"]),
        .executable(name: "px-ls", targets: ["px-ls"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // DICOM TLS (PS3.15 Annex B.9) in the native pipelines.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // px-listen runs as a Service: signals, graceful shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // A C-FIND SCP's matches handed from the provider to the association with back-pressure (AsyncThrowingChannel).
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        // DICOMweb (PS3.18) over HTTP/1.1 and 2, TLS through swift-nio-ssl.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The config file (TOML 1.0), decoded into Decodable types.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // `make docs`: the PX library's DocC catalog (a plugin, built only when documentation is generated).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // zlib, for Deflated Explicit VR Little Endian (PS3.5 §A.5).
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // Linux calls Swift's Glibc module leaves out (sync_file_range(2) for the zip writer's early writeback).
        .systemLibrary(name: "CLinuxIO", path: "Sources/CLinuxIO"),
        // SQLite 3, for the folder place's index (ROOT/.px/index.sqlite).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // A small typed layer over SQLite's C API (connections, statements, transactions, user_version
        // migrations), without Foundation: the folder index's only database code (docs/architecture.rst).
        .target(
            name: "PXSQLite",
            dependencies: ["CSQLite"],
            swiftSettings: strictSettings
        ),

        // The DICOM data layer: dictionary, datasets, transfer syntaxes, Part 10 files,
        // character sets and JSON. No network code.
        .target(
            name: "DICOMData",
            dependencies: ["CZlib"],
            swiftSettings: strictSettings
        ),

        // The DICOM upper layer (PS3.8) and DIMSE (PS3.7) as codecs and state machines:
        // no sockets, NIOCore only.
        .target(
            name: "DICOMProtocol",
            dependencies: [
                "DICOMData",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),

        // The network layer: SwiftNIO transport, association client (SCU) and server (SCP).
        .target(
            name: "DICOMNetwork",
            dependencies: [
                "DICOMData",
                "DICOMProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "px-dump",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),

        // Network measurements (association rate, C-STORE throughput), not tests.
        .executableTarget(
            name: "px-net-bench",
            dependencies: [
                "DICOMData",
                "DICOMNetwork",
                "DICOMProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // Benchmarks (`make bench`), not tests.
        .executableTarget(
            name: "px-bench",
            dependencies: ["DICOMData"],
            swiftSettings: strictSettings
        ),

        // The storage engine: the layout of the tree, placing a received file at its final name
        // without following links, and pypx's info files. Knows files and data sets, not commands,
        // backends or the network; PXCore's model refers to it, never the other way round.
        .target(
            name: "PXStorage",
            dependencies: [
                "DICOMData",
                "CZlib",
                "CLinuxIO",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // The typed model every backend shares: nodes, requests, results, errors, statuses and the
        // one JSON rendering. No DCMTK and no network code.
        .target(
            name: "PXCore",
            dependencies: [
                "DICOMData",
                "PXStorage",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // The backend that drives DCMTK's echoscu, findscu, movescu and storescp.
        .target(
            name: "DCMTKBackend",
            dependencies: [
                "PXCore",
                "PXStorage",
                "DICOMData",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // The backend that speaks DICOM itself, on DICOMNetwork.
        .target(
            name: "NativeBackend",
            dependencies: [
                "PXCore",
                "PXStorage",
                "DICOMData",
                "DICOMProtocol",
                "DICOMNetwork",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // DICOMweb (PS3.18): QIDO-RS search, WADO-RS retrieval (multipart parsed as a stream) and STOW-RS
        // store on async-http-client, and a backend for it behind the DICOMBackend protocol.
        .target(
            name: "DICOMWeb",
            dependencies: [
                "PXCore",
                "PXStorage",
                "DICOMData",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // A folder place: its SQLite index (ROOT/.px/index.sqlite) of studies, series and instances, kept
        // fresh by refresh() and record(), answering PlaceInventory.
        .target(
            name: "PXIndex",
            dependencies: [
                "PXCore",
                "PXStorage",
                "DICOMData",
                "DICOMNetwork",
                "PXSQLite",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // The places library (issue 21): the endpoints px reads studies from and writes them to (a DIMSE node, a
        // DICOMweb service, a folder, a zip folder), what each can do (verify, inventory, yield instances, take
        // them), one source -> sink transfer path, and the sync engine that plans and runs it, reporting typed
        // events. Below the command line: no ArgumentParser, no stdout or stderr.
        .target(
            name: "PXPlaces",
            dependencies: [
                "PXCore",
                "PXStorage",
                "PXIndex",
                "DICOMData",
                "DICOMNetwork",
                "DICOMWeb",
                "NativeBackend",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strictSettings
        ),

        // `import PX`: the typed model, the data layer, both backends behind one choice, the places library
        // (endpoints, the folder index, DICOMweb, sync) and DICOMNetwork's server API (DICOMServer and its handlers).
        .target(
            name: "PX",
            dependencies: [
                "PXCore", "PXStorage", "DICOMData", "DCMTKBackend", "NativeBackend", "PXPlaces", "PXIndex", "DICOMWeb",
                "DICOMNetwork",
            ],
            swiftSettings: strictSettings
        ),

        // Option groups, the config file, backend selection and output shared by the px commands.
        .target(
            name: "PXCommandLine",
            dependencies: [
                "PX",
                "PXPlaces",
                "PXIndex",
                "PXCore",
                "DICOMWeb",
                "PXStorage",
                "DICOMData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // What each px command does, behind its options: the run-and-report path, the commands'
        // logic and px-listen's series hook. The executables hold only their --help and options.
        .target(
            name: "PXCommands",
            dependencies: [
                "PXCommandLine",
                "PX",
                "PXPlaces",
                "DICOMWeb",
                "PXCore",
                "PXIndex",
                "NativeBackend",
                "DICOMNetwork",
                .product(name: "NIOCore", package: "swift-nio"),
                "PXStorage",
                "DICOMData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "px-echo",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "px-find",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "px-move",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "px-listen",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),

        // A folder place served over DIMSE (issue 12).
        .executableTarget(
            name: "px-serve",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),

        // A folder place listed as px-find lists a node (issue 12).
        .executableTarget(
            name: "px-ls",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),

        // C-STORE SCU and C-GET SCU (issue 4).
        .executableTarget(
            name: "px-push",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "px-get",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "px-sync",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings
        ),

        // The ten commands' definitions (options, --help, --version) and the multi-call dispatcher: the thin px-*
        // executables and the multi-call `px` run these same types.
        .target(
            name: "PXTools",
            dependencies: [
                "PXCommandLine",
                "PXCommands",
                "PXPlaces",
                "PXCore",
                "DICOMData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // `px echo ...`, or `px-echo ...` through a link to px (git's and busybox's way): what `make install` installs.
        .executableTarget(
            name: "px",
            dependencies: ["PXTools"],
            swiftSettings: strictSettings,
            // The static-stdlib link exports every Swift symbol (`-export-dynamic` in the toolchain's
            // static-stdlib-args.lnk): 43,000 dynamic symbols, 5 MB of the binary, looked through by the
            // loader and by the runtime's dladdr at every start. Nothing resolves them from outside.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"])]
        ),

        // What every test target shares: the project's paths and venv, the built executables, processes,
        // peers and free ports (one definition each).
        .target(
            name: "PXTestSupport",
            dependencies: [
                "DICOMData",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/PXTestSupport",
            swiftSettings: strictSettings
        ),
        // A process the zip place tests kill with SIGKILL while it archives (it is a test's child, not a tool).
        .executableTarget(
            name: "zip-archive-child",
            dependencies: ["PXStorage"],
            path: "Tests/ZipArchiveChild",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PXCoreTests",
            dependencies: ["PXCore", "PXStorage", "DICOMData"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PXStorageTests",
            dependencies: ["PXStorage", "DICOMData", "PXTestSupport", "PXCore", "zip-archive-child"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DCMTKBackendTests",
            dependencies: ["DCMTKBackend", "PXCore", "DICOMData"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PXCommandsTests",
            // The executables are dependencies so that `swift test` builds them: the integration
            // tests run them against real DCMTK peers.
            dependencies: [
                "PXCommandLine", "PXCommands", "PXCore", "PXStorage", "DICOMData", "PXTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                "px-echo", "px-find", "px-move", "px-listen", "px-push", "px-get",
                "px-sync",
                "px-serve", "px-ls",
                "PX", "PXPlaces",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PXIndexTests",
            dependencies: [
                "PXIndex", "PXCore", "PXStorage", "DICOMData", "DICOMNetwork", "PXTestSupport",
                "PXSQLite",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DICOMWebTests",
            dependencies: ["DICOMWeb", "PXCore", "DICOMData"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DICOMDataTests",
            dependencies: ["DICOMData", "PXTestSupport"],
            exclude: ["Support/pydicom_json.py"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DICOMProtocolTests",
            dependencies: [
                "DICOMProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "NativeBackendTests",
            dependencies: [
                "NativeBackend", "PXCommandLine", "PXCore", "DICOMData", "DICOMProtocol", "DICOMNetwork",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DICOMNetworkTests",
            dependencies: [
                "PXTestSupport",
                "DICOMNetwork",
                "DICOMProtocol",
                "DICOMData",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
