import DICOMData
import DICOMProtocol
import NIOCore

/// How ``DICOMServer`` serves Query/Retrieve (PS3.4 Annex C): the provider, the information models offered, and
/// the timeouts of the C-STORE sub-operations. Set ``DICOMServer/Configuration/queryRetrieve`` to enable it.
///
/// ```swift
/// let archive = try DirectoryArchive(
///     directory: "/data/dicom",
///     moveDestinations: ["VIEWER": DICOMPeer(host: "10.0.0.5", port: 104, aeTitle: "VIEWER")],
///     logger: logger)
/// var configuration = DICOMServer.Configuration(port: 11112, aeTitle: "PXQR", temporaryDirectory: "/tmp")
/// configuration.queryRetrieve = QueryRetrieveSCPConfiguration(provider: archive)
/// let server = try await DICOMServer.bind(configuration: configuration, storage: storage, logger: logger)
/// try await server.run()
/// ```
///
/// With it, the server accepts the FIND, MOVE and GET SOP classes of ``models`` and agrees to the SCP role that a
/// C-GET requestor proposes for the storage SOP classes; C-MOVE sub-associations are opened with the called AE
/// title as calling AE title.
public struct QueryRetrieveSCPConfiguration: Sendable {
    /// Answers the queries and names the instances to send.
    public var provider: any QueryRetrieveProvider
    /// The information models whose FIND, MOVE and GET SOP classes are accepted.
    public var models: Set<QueryRetrieveModel>
    /// Connecting to a C-MOVE destination.
    public var connectTimeout: TimeAmount
    /// A-ASSOCIATE-AC and A-RELEASE-RP of a C-MOVE sub-association.
    public var acseTimeout: TimeAmount
    /// Each C-STORE-RSP of a sub-operation (C-MOVE sub-association, or on the association itself for C-GET).
    public var dimseTimeout: TimeAmount
    /// How long the provider may take: for all the matches of a C-FIND (its own time, not the time the
    /// requestor takes to read them; then 0xC000), the instances of a retrieve (then 0xA701), or a move
    /// destination (then 0xA801).
    public var providerTimeout: TimeAmount

    public init(
        provider: any QueryRetrieveProvider,
        models: Set<QueryRetrieveModel> = Set(QueryRetrieveModel.allCases),
        connectTimeout: TimeAmount = .seconds(10),
        acseTimeout: TimeAmount = .seconds(30),
        dimseTimeout: TimeAmount = .seconds(60),
        providerTimeout: TimeAmount = .seconds(60)
    ) {
        self.provider = provider
        self.models = models
        self.connectTimeout = connectTimeout
        self.acseTimeout = acseTimeout
        self.dimseTimeout = dimseTimeout
        self.providerTimeout = providerTimeout
    }

    /// Adds the FIND, MOVE and GET SOP classes of ``models`` (uncompressed identifiers), and lets the requestor
    /// take the SCP role for every supported storage SOP class so that C-GET can send its sub-operations on the
    /// association (role selection, PS3.7 §D.3.3.4).
    func extend(_ supported: inout [String: AssociationAcceptorPolicy.SupportedAbstractSyntax]) {
        for model in self.models {
            for uid in [model.findSOPClass, model.moveSOPClass, model.getSOPClass] {
                supported[uid] = AssociationAcceptorPolicy.SupportedAbstractSyntax(
                    transferSyntaxes: TransferSyntaxLists.uncompressed)
            }
        }
        guard self.models.contains(where: { supported[$0.getSOPClass] != nil }) else { return }
        for uid in UIDDictionary.storageSOPClasses {
            if var entry = supported[uid] {
                entry.allowsRequestorSCP = true
                entry.transferSyntaxesAsSender = Self.sendingPreference
                supported[uid] = entry
            }
        }
    }
}

extension QueryRetrieveSCPConfiguration {
    /// The syntax to accept in a C-GET requestor's storage context (the requestor as SCP only), where the
    /// sub-operations go: Explicit, then Implicit VR Little Endian, which every uncompressed file can be sent
    /// in (``StorableFile/sendableTransferSyntaxes``), before the syntaxes only a file already in them can go
    /// in (a compressed syntax accepted for a whole SOP class would fail every uncompressed instance of it).
    /// Each file then takes an accepted context in its own syntax or a lossless conversion of it.
    static let sendingPreference: [String] =
        TransferSyntaxLists.uncompressed
        + TransferSyntaxLists.storage.filter { !TransferSyntaxLists.uncompressed.contains($0) }
        + [WellKnownUID.explicitVRBigEndian].filter { !TransferSyntaxLists.storage.contains($0) }
}

extension [String: AssociationAcceptorPolicy.SupportedAbstractSyntax] {
    /// These syntaxes plus what `queryRetrieve` needs (see ``QueryRetrieveSCPConfiguration/extend(_:)``).
    func extended(by queryRetrieve: QueryRetrieveSCPConfiguration?) -> Self {
        guard let queryRetrieve else { return self }
        var result = self
        queryRetrieve.extend(&result)
        return result
    }
}
